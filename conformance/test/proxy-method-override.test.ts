import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ProxyProcess, startSourceProxy } from "../../test-support/proxy-process.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-method-override-");

const record = (id: number) =>
  `{"id":${id},"petId":7,"quantity":1,"shipDate":"2026-01-01T00:00:00.000Z","complete":false}`;

/** The method a server with method-override middleware serves a request as (headers, `_method`). */
function servedAs(request: IncomingMessage, body: string): string {
  const header =
    request.headers["x-http-method-override"] ??
    request.headers["x-http-method"] ??
    request.headers["x-method-override"];
  const url = new URL(request.url ?? "/", "http://upstream");
  const form = request.method === "POST" ? new URLSearchParams(body).get("_method") : null;
  return String(header ?? url.searchParams.get("_method") ?? form ?? request.method).toUpperCase();
}

/**
 * A backend of orders 1 to 6 that follows method overrides: a request served as DELETE of an order cancels
 * it (and the order leaves the list), one served as `POST /admin/reset` empties the store.
 */
async function startOverridingUpstream() {
  let orders = [1, 2, 3, 4, 5, 6];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const method = servedAs(request, body);
      const { pathname } = new URL(request.url ?? "/", "http://upstream");
      const [, cancelled] = /^\/v1\/store\/orders\/(\d+)$/.exec(pathname) ?? [];
      if (method === "POST" && pathname === "/admin/reset") {
        orders = [];
        response.writeHead(204).end();
      } else if (method === "DELETE" && cancelled !== undefined) {
        orders = orders.filter((id) => String(id) !== cancelled);
        response.writeHead(204).end();
      } else if (method === "GET" && pathname === "/v1/store/orders") {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(`[${orders.map(record).join(",")}]`);
      } else response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The failed checks and state findings of a proxy's JSON report, as `id: message`. */
function failures(report: Report): string[] {
  return report.scenarios
    .flatMap((scenario) => scenario.checks)
    .filter((check) => check.status === "failed")
    .map((check) => `${check.id}: ${check.message}`);
}

const headers = { authorization: "Bearer some-key" };

/** Each spelling of an override that makes a GET a cancel of its order, for these servers. */
const CANCELS_BY_GET: ReadonlyArray<{
  orderId: number;
  spelling: string;
  init: RequestInit;
  query?: string;
}> = [
  {
    orderId: 2,
    spelling: "X-HTTP-Method-Override",
    init: { headers: { "x-http-method-override": "DELETE" } },
  },
  { orderId: 3, spelling: "X-HTTP-Method", init: { headers: { "x-http-method": "delete" } } },
  { orderId: 4, spelling: "X-Method-Override", init: { headers: { "x-method-override": "DELETE" } } },
  { orderId: 5, spelling: "_method query", init: {}, query: "?_method=DELETE" },
];

describe("method overrides through the proxy", () => {
  it("reads each spelling as the write it may have been: no order is said lost", async () => {
    const upstream = await startOverridingUpstream();
    const json = join(folder, "overrides.json");
    let proxy: ProxyProcess | undefined;
    try {
      proxy = await startSourceProxy(["--upstream", upstream.url, "--reporter", `json:${json}`]);
      const base = proxy.url;
      const list = async () => {
        const answer = await fetch(`${base}/store/orders`, { headers });
        assert.equal(answer.status, 200);
        return ((await answer.json()) as Array<{ id: number }>).map((order) => order.id);
      };
      assert.deepEqual(await list(), [1, 2, 3, 4, 5, 6]);
      for (const { orderId, spelling, init, query } of CANCELS_BY_GET) {
        const sent = { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } };
        const answer = await fetch(`${base}/store/orders/${orderId}${query ?? ""}`, sent);
        assert.equal(answer.status, 204, spelling);
        assert.ok(!(await list()).includes(orderId), `${spelling}: the upstream cancelled order ${orderId}`);
      }
      // A form's `_method` on a POST: a write outside the contract whatever it names.
      const form = await fetch(`${base}/store/orders/6`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
        body: "_method=DELETE",
      });
      assert.equal(form.status, 204);
      assert.deepEqual(await list(), [1]);
      assert.deepEqual(await list(), [1]);
      // A GET that a server serves as a control write outside the contract.
      const reset = await fetch(new URL("/admin/reset", base), {
        headers: { "x-http-method-override": "POST" },
      });
      assert.equal(reset.status, 204);
      assert.deepEqual(await list(), []);
    } finally {
      await proxy?.stop("SIGTERM");
      await upstream.close();
    }
    const report = JSON.parse(readFileSync(json, "utf8")) as Report;
    assert.deepEqual(failures(report), []);
    const notes = (report.notes ?? []).join("\n");
    // One note for the four: each cancel by a GET may have been carried out.
    assert.match(
      notes,
      /order 2 may have been cancelled \(#\d+ GET \/v1\/store\/orders\/2 → 204\) .* \(seen 4 times\)/,
    );
    assert.match(
      notes,
      /started again after 2 writes outside the contract \(first: #\d+ POST \/v1\/store\/orders\/6\)/,
    );
    assert.match(
      report.warnings.join("\n"),
      /its method override names DELETE, which the upstream may have followed instead of GET/,
    );
  });
});
