import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { startSourceProxy } from "../../test-support/proxy-process.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-proxy-path-spellings-");
const headers = { authorization: "Bearer some-key" };

/** Spellings of GET /v1/store/orders that many routers serve as the list. */
const LIST_SPELLINGS = [
  "/v1/store/orders/",
  "/v1//store/orders",
  "/v1/store/./orders",
  "/v1/store/%6frders",
  "/v1/store/orders;x=1",
  "/V1/store/orders",
  "/v1/store/orders/.",
];

const order = (id: number, extra = "") =>
  `{"id":${id},"petId":7,"quantity":1,"shipDate":"2026-01-01T00:00:00.000Z","complete":false${extra}}`;

/**
 * A backend that serves its list at any path (`?m=bad`: an order that shows its status, which the Order
 * record does not have; `?m=without`: order 6 gone) and answers 404 to every cancel, as a router that has
 * only the exact path of the cancel answers its variants.
 */
async function startLenientUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const mode = new URL(request.url ?? "/", "http://upstream").searchParams.get("m");
    if (request.method === "DELETE") {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ code: "not_found", message: "No such route.", status: 404 }));
      return;
    }
    const orders =
      mode === "bad"
        ? [order(5, ',"status":"placed"'), order(6)]
        : [order(5), ...(mode === "without" ? [] : [order(6)])];
    response.writeHead(200, { "content-type": "application/json" });
    response.end(`[${orders.join(",")}]`);
  });
  return serving(server);
}

/** A test upstream listening on loopback: its `/v1` base, and how to close it with its connections. */
async function serving(server: Server): Promise<{ url: string; close(): Promise<void> }> {
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

/** Sends a request with the path exactly as written (a URL would be normalized first), and reads its status. */
function send(origin: string, method: string, path: string): Promise<number> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const sent = request({ hostname, port, method, path, headers }, (answer) => {
      answer.resume();
      answer.on("end", () => resolve(answer.statusCode ?? 0));
    });
    sent.on("error", reject);
    sent.end();
  });
}

function failures(report: Report): string[] {
  return report.scenarios
    .flatMap((scenario) => scenario.checks)
    .filter((check) => check.status === "failed")
    .map((check) => `${check.id}: ${check.message}`);
}

/** Runs `traffic` through a proxy under --fail-on-violation: its exit code and JSON report. */
async function gate(
  upstream: string,
  name: string,
  traffic: (origin: string) => Promise<void>,
): Promise<{ code: number | null; report: Report }> {
  const json = join(folder, `${name}.json`);
  const proxy = await startSourceProxy([
    "--upstream",
    upstream,
    "--fail-on-violation",
    "--reporter",
    `json:${json}`,
  ]);
  const sent = traffic(new URL(proxy.url).origin).then(
    () => undefined,
    (error: unknown) => error,
  );
  const failed = await sent;
  const { code } = await proxy.stop("SIGTERM");
  if (failed !== undefined) throw failed;
  return { code, report: JSON.parse(readFileSync(json, "utf8")) as Report };
}

/**
 * A backend whose router takes exact paths only, as this project's mock does: any other spelling is
 * answered 404, but for a DELETE of order 5 with a trailing slash, which it carries out and answers
 * `carriedOut` (500, or a 303 to where the order was, as a redirect after a write).
 */
async function startStrictUpstream(carriedOut = 500): Promise<{ url: string; close(): Promise<void> }> {
  let cancelled = false;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.method === "GET" && path === "/v1/store/orders") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(`[${[...(cancelled ? [] : [order(5)]), order(6)].join(",")}]`);
    } else if (request.method === "DELETE" && path === "/v1/store/orders/6") {
      json(409, { code: "not_pending", message: "The order is not pending.", status: 409 });
    } else if (request.method === "DELETE" && path === "/v1/store/orders/5/") {
      cancelled = true;
      if (carriedOut === 303) response.writeHead(303, { location: "/v1/store/orders" }).end();
      else json(500, { code: "internal", message: "Cancelled, then failed.", status: 500 });
    } else json(404, { code: "not_found", message: "No resource.", status: 404 });
  });
  return serving(server);
}

/**
 * A backend that reads a path as Tomcat and Rails do (a segment's `;` parameters stripped before its dots
 * are resolved, a `.json` suffix taken off) and carries out cancels; or, with `waf`, one that serves exact
 * paths only and refuses every other spelling with 403 before any route, as a WAF or an nginx rule does.
 */
async function startReadingUpstream(waf: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const cancelled = new Set<number>();
  const server: Server = createServer((request, response) => {
    const raw = (request.url ?? "/").split("?")[0] as string;
    const kept: string[] = [];
    for (const segment of raw
      .split("/")
      .slice(1)
      .map((each) => each.replace(/;.*$/, "")))
      if (segment === "..") kept.pop();
      else if (segment !== "." && segment !== "") kept.push(segment);
    const path = `/${kept.join("/")}`.replace(/\.json$/, "");
    if (waf && path !== raw) {
      response.writeHead(403, { "content-type": "text/html" });
      response.end("<html><body>403 Forbidden</body></html>");
      return;
    }
    const cancel = /^\/v1\/store\/orders\/(\d+)$/.exec(path);
    if (request.method === "DELETE" && cancel) {
      cancelled.add(Number(cancel[1]));
      response.writeHead(204).end();
    } else if (request.method === "GET" && path === "/v1/store/orders") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(`[${[5, 6].filter((id) => !cancelled.has(id)).map((id) => order(id))}]`);
    } else {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ code: "not_found", message: "No resource.", status: 404 }));
    }
  });
  return serving(server);
}

describe("path spellings through the proxy", () => {
  it("takes no spelling a strict upstream declines as its operation, equivalent ones included", async () => {
    const upstream = await startStrictUpstream();
    try {
      const { code, report } = await gate(upstream.url, "strict", async (origin) => {
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
        for (const path of ["/v1/store/./orders", "/v1/store/%6frders", "/v1/store/orders/"])
          assert.equal(await send(origin, "GET", path), 404, path);
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/6"), 409);
        // Declined, not "no such order": order 6 is still listed, and no rule is broken.
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/./6"), 404);
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
      });
      assert.equal(code, 0, failures(report).join("\n"));
      assert.equal(report.traffic?.notJudged, 4);
    } finally {
      await upstream.close();
    }
  });

  it("holds a variant cancel answered 5xx as one that may have been carried out", async () => {
    const upstream = await startStrictUpstream();
    try {
      const { report } = await gate(upstream.url, "variant-5xx", async (origin) => {
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/5/"), 500);
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
      });
      const found = failures(report);
      assert.ok(!found.some((failure) => failure.startsWith("state.")), found.join("\n"));
      assert.match(found.join("\n"), /^cancelOrder\.status: /m);
    } finally {
      await upstream.close();
    }
  });

  it("holds a variant cancel redirected (303) as one that may have been carried out", async () => {
    const upstream = await startStrictUpstream(303);
    try {
      const { report } = await gate(upstream.url, "variant-303", async (origin) => {
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/5/"), 303);
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
      });
      const found = failures(report);
      assert.ok(!found.some((failure) => failure.startsWith("state.")), found.join("\n"));
    } finally {
      await upstream.close();
    }
  });

  it("judges each spelling routers serve as the list as the list: a gate fails on its bad answer", async () => {
    const upstream = await startLenientUpstream();
    try {
      for (const [index, spelling] of LIST_SPELLINGS.entries()) {
        const { code, report } = await gate(upstream.url, `bad-${index}`, async (origin) => {
          assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
          assert.equal(await send(origin, "GET", `${spelling}?m=bad`), 200);
        });
        assert.equal(code, 1, `${spelling}: ${JSON.stringify(report.traffic)}`);
        assert.match(failures(report).join("\n"), /status/, spelling);
      }
    } finally {
      await upstream.close();
    }
  });

  it("passes a gate when every spelling's answer keeps the rules", async () => {
    const upstream = await startLenientUpstream();
    try {
      const { code, report } = await gate(upstream.url, "good", async (origin) => {
        for (const path of ["/v1/store/orders", ...LIST_SPELLINGS])
          assert.equal(await send(origin, "GET", path), 200, path);
      });
      assert.equal(code, 0, JSON.stringify(report.warnings));
      assert.equal(report.traffic?.judged, LIST_SPELLINGS.length + 1);
      assert.equal(report.traffic?.notJudged, 0);
    } finally {
      await upstream.close();
    }
  });

  it("judges no spelling of /v1 itself forwarded outside an upstream base of another path", async () => {
    const upstream = await startLenientUpstream();
    try {
      const { code, report } = await gate(
        upstream.url.replace(/\/v1$/, "/api/v1"),
        "other-base",
        async (origin) => {
          assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
          // Forwarded as it came, to /V1/store/orders: not the upstream's API, whatever it answers.
          assert.equal(await send(origin, "GET", "/V1/store/orders?m=bad"), 200);
        },
      );
      assert.equal(code, 0, JSON.stringify(report.warnings));
      assert.deepEqual([report.traffic?.judged, report.traffic?.notJudged], [1, 1]);
    } finally {
      await upstream.close();
    }
  });

  it("does not judge a variant the upstream declines, and never takes it as a cancel", async () => {
    const upstream = await startLenientUpstream();
    try {
      const { report } = await gate(upstream.url, "declined", async (origin) => {
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/5/"), 404);
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/5;x=1"), 404);
        // Still listed after cancels the upstream declined: no finding.
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/6/"), 404);
        // Gone from the list, though nothing cancelled it: a finding, as with no request at all.
        assert.equal(await send(origin, "GET", "/v1/store/orders?m=without"), 200);
      });
      const warnings = report.warnings.join("\n");
      assert.match(
        warnings,
        /2 requests were forwarded without being judged \(a spelling of DELETE \/v1\/store\/orders\/\{orderId\} the contract does not have \(trailing slash\); the upstream answered 404\)/,
      );
      assert.match(
        warnings,
        /1 request was forwarded without being judged \(a spelling of DELETE \/v1\/store\/orders\/\{orderId\} the contract does not have \(; parameters\); the upstream answered 404\)/,
      );
      const found = failures(report).filter((failure) => failure.startsWith("state."));
      assert.equal(found.length, 1, found.join("\n"));
      assert.match(found[0] as string, /^state\.listed-orders-stay: .*\b6\b/);
    } finally {
      await upstream.close();
    }
  });
  it("routes a cancel spelled as Tomcat serves it to its order: no false state failure", async () => {
    const upstream = await startReadingUpstream(false);
    try {
      const { code, report } = await gate(upstream.url, "tomcat", async (origin) => {
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/9/..;/5"), 204);
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/6.json"), 204);
        for (const path of ["/v1/store/x/..;/orders", "/v1/store/.;/orders", "/v1/store/orders.json"])
          assert.equal(await send(origin, "GET", path), 200, path);
      });
      assert.equal(code, 0, failures(report).join("\n"));
      assert.deepEqual([report.traffic?.judged, report.traffic?.notJudged], [6, 0]);
    } finally {
      await upstream.close();
    }
  });

  it("does not judge a spelling an upstream refuses with 403, and never takes it as a cancel", async () => {
    const upstream = await startReadingUpstream(true);
    try {
      const { code, report } = await gate(upstream.url, "waf", async (origin) => {
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
        for (const path of ["/v1//store/orders", "/v1/store/orders;jsessionid=ABC", "/v1/store/./orders"])
          assert.equal(await send(origin, "GET", path), 403, path);
        assert.equal(await send(origin, "DELETE", "/v1/store/orders/5/"), 403);
        assert.equal(await send(origin, "GET", "/v1/store/orders"), 200);
      });
      assert.equal(code, 0, failures(report).join("\n"));
      assert.deepEqual([report.traffic?.judged, report.traffic?.notJudged], [2, 4]);
      assert.match(report.warnings.join("\n"), /\(trailing slash\); the upstream answered 403\)/);
    } finally {
      await upstream.close();
    }
  });
});
