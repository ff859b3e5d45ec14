import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ProxyProcess, startSourceProxy } from "../../test-support/proxy-process.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-unanswered-writes-");

const record = (id: number) =>
  `{"id":${id},"petId":7,"quantity":1,"shipDate":"2026-01-01T00:00:00.000Z","complete":false}`;

/**
 * A backend of orders 1, 2 and 3 that never answers `POST /admin/reset` (which empties the store) nor a
 * cancel (which removes its order): it carries one out later all the same, once it has served `listsBefore`
 * lists after the proxy gave up on it (closed its connection), as a server does that finishes work its
 * client no longer awaits.
 */
async function startLateWritesUpstream(listsBefore: number) {
  let orders = [1, 2, 3];
  let listsSinceGivenUp: number | undefined;
  let lateWrite = () => {};
  const server: Server = createServer((request, response) => {
    request.resume();
    const [, cancelled] = /^\/v1\/store\/orders\/(\d+)$/.exec(request.url ?? "") ?? [];
    const isReset = request.method === "POST" && request.url === "/admin/reset";
    if (isReset || (request.method === "DELETE" && cancelled !== undefined)) {
      lateWrite = () => {
        orders = isReset ? [] : orders.filter((id) => String(id) !== cancelled);
      };
      response.on("close", () => {
        listsSinceGivenUp = 0;
      });
      return;
    }
    if (!request.headers.authorization) {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ code: "unauthorized", message: "No key.", status: 401 }));
      return;
    }
    if (listsSinceGivenUp !== undefined && listsSinceGivenUp++ === listsBefore) lateWrite();
    response.writeHead(200, { "content-type": "application/json" });
    response.end(`[${orders.map(record).join(",")}]`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    /** Stops listening, and listens again on the same port. */
    pause: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return () => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** How many orders a list through the proxy at `base` shows. */
async function ordersListed(base: string | undefined): Promise<number> {
  const answer = await fetch(`${base}/store/orders`, { headers: { authorization: "Bearer some-key" } });
  assert.equal(answer.status, 200);
  return ((await answer.json()) as unknown[]).length;
}

/** The failed checks and state findings of a proxy's JSON report, as `id: message`. */
function failures(report: Report): string[] {
  return report.scenarios
    .flatMap((scenario) => scenario.checks)
    .filter((check) => check.status === "failed")
    .map((check) => `${check.id}: ${check.message}`);
}

describe("a write outside the contract that was never answered", () => {
  it("may take effect after the proxy gave up on it: no list after it is compared, and the gate says so", async () => {
    const upstream = await startLateWritesUpstream(2);
    const json = join(folder, "late-reset.json");
    let proxy: ProxyProcess | undefined;
    let code: number | null = null;
    try {
      proxy = await startSourceProxy([
        "--upstream",
        upstream.url,
        "--deadline",
        "300ms",
        "--fail-on-violation",
        "--reporter",
        `json:${json}`,
      ]);
      const list = () => ordersListed(proxy?.url);
      assert.equal(await list(), 3);
      const reset = await fetch(new URL("/admin/reset", proxy.url), { method: "POST" });
      await reset.arrayBuffer();
      assert.ok(reset.status >= 500, `the proxy gave up on the write: ${reset.status}`);
      // Lists after the proxy gave up on it, each over before the next: the reset empties the store among them.
      const shown = [await list(), await list(), await list(), await list()];
      assert.deepEqual(
        shown,
        [3, 3, 0, 0],
        "the upstream carried the write out after the proxy gave up on it",
      );
    } finally {
      if (proxy) ({ code } = await proxy.stop("SIGTERM"));
      await upstream.close();
    }
    const report = JSON.parse(readFileSync(json, "utf8")) as Report;
    assert.deepEqual(failures(report), [], "no order is said to be lost");
    const notCompared = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .find((check) => check.id === "listOrders.state");
    assert.equal(notCompared?.status, "skipped", JSON.stringify(notCompared));
    assert.match(
      notCompared?.message ?? "",
      /not compared with other lists: #\d+ POST \/admin\/reset was never answered, so it may take effect at any later time/,
    );
    assert.equal(code, 2, "the run was not judged whole: the gate neither passes nor fails it");
    assert.ok(
      (report.notes ?? []).some((note) =>
        /1 write outside the contract was never answered \(first: #\d+ POST \/admin\/reset\)/.test(note),
      ),
      (report.notes ?? []).join("\n"),
    );
  });

  it("is no barrier when it never reached the upstream: the lists after a write refused a connection are compared", async () => {
    const upstream = await startLateWritesUpstream(2);
    const json = join(folder, "refused-reset.json");
    let proxy: ProxyProcess | undefined;
    try {
      proxy = await startSourceProxy(["--upstream", upstream.url, "--reporter", `json:${json}`]);
      const list = () => ordersListed(proxy?.url);
      assert.equal(await list(), 3);
      const listenAgain = await upstream.pause();
      const reset = await fetch(new URL("/admin/reset", proxy.url), { method: "POST" });
      await reset.arrayBuffer();
      assert.equal(reset.status, 502, "nothing listened: the write never left the proxy");
      await listenAgain();
      assert.deepEqual([await list(), await list()], [3, 3]);
    } finally {
      await proxy?.stop("SIGTERM");
      await upstream.close();
    }
    const report = JSON.parse(readFileSync(json, "utf8")) as Report;
    assert.deepEqual(failures(report), []);
    assert.ok(!report.warnings.some((warning) => /never answered/.test(warning)), report.warnings.join("\n"));
    const states = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .filter((check) => check.id === "listOrders.state");
    assert.ok(
      states.every((check) => !/never answered/.test(check.message ?? "")),
      "the lists after the refused write were compared",
    );
  });

  it("is held so already for a cancel: one carried out after the proxy gave up on it loses no order", async () => {
    const upstream = await startLateWritesUpstream(2);
    const json = join(folder, "late-cancel.json");
    let proxy: ProxyProcess | undefined;
    try {
      proxy = await startSourceProxy([
        "--upstream",
        upstream.url,
        "--deadline",
        "300ms",
        "--reporter",
        `json:${json}`,
      ]);
      const headers = { authorization: "Bearer some-key" };
      const list = () => ordersListed(proxy?.url);
      assert.equal(await list(), 3);
      const cancel = await fetch(`${proxy.url}/store/orders/2`, { method: "DELETE", headers });
      await cancel.arrayBuffer();
      assert.ok(cancel.status >= 500, `the proxy gave up on the cancel: ${cancel.status}`);
      const shown = [await list(), await list(), await list(), await list()];
      assert.deepEqual(
        shown,
        [3, 3, 2, 2],
        "the upstream carried the cancel out after the proxy gave up on it",
      );
    } finally {
      await proxy?.stop("SIGTERM");
      await upstream.close();
    }
    const report = JSON.parse(readFileSync(json, "utf8")) as Report;
    assert.deepEqual(
      failures(report),
      [],
      "order 2 may have been cancelled: its leaving the list is no finding",
    );
    assert.ok(
      (report.notes ?? []).some((note) => /order 2 may have been cancelled \(#\d+ DELETE/.test(note)),
      (report.notes ?? []).join("\n"),
    );
  });
});
