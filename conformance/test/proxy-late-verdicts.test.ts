import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { tempFolder } from "../../common/temp-folder.ts";
import { startSourceProxy } from "../../test-support/proxy-process.ts";
import type { RunOutcome } from "../reports/outcome.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-late-verdicts-");
// Lists past what the proxy keeps whole (1 MiB): judged as they stream, their verdict comes after them.
const ORDERS = 20_000;
const MISSING = "5";

const record = (id: number) =>
  `{"id":${id},"petId":${100 + (id % 50)},"quantity":1,"shipDate":"2026-11-02T10:00:00Z","complete":false}`;

/**
 * A backend whose first list shows every order and whose second leaves order 5 out with no cancel of it
 * (a violation); writes are answered as `x-status` says, after `x-delay` ms.
 */
async function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  let lists = 0;
  const server: Server = createServer((incoming, response) => {
    incoming.resume();
    incoming.on("end", () => {
      const delay = Number(incoming.headers["x-delay"] ?? 0);
      setTimeout(() => {
        if (!incoming.headers.authorization) {
          // The proxy's own probe at start, and nothing else, comes without a key.
          response.writeHead(401, { "content-type": "application/json" });
          response.end('{"code":"unauthorized","message":"No key.","status":401}');
          return;
        }
        if (incoming.method === "GET") {
          const skip = lists++ === 0 ? "" : MISSING;
          const ids = Array.from({ length: ORDERS }, (_, at) => at + 1).filter((id) => String(id) !== skip);
          response.writeHead(200, { "content-type": "application/json" });
          response.end(`[${ids.map(record).join(",")}]`);
          return;
        }
        const status = Number(incoming.headers["x-status"] ?? 204);
        response.writeHead(status, status === 204 ? {} : { "content-type": "application/json" });
        response.end(status === 204 ? undefined : '{"code":"bad","message":"refused","status":400}');
      }, delay);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function send(url: string, method: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<number>((resolve, reject) => {
    const outgoing = request(
      new URL(path, url),
      { method, headers: { authorization: "Bearer dev-key-123", ...headers } },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

/**
 * Two lists through the proxy, the second of which drops an order no cancel touched, then `after`
 * (sent once the second list was whole, while its verdict may still be coming); the proxy's exit code
 * and report's outcome.
 */
async function lateVerdict(name: string, after: (proxyUrl: string) => Promise<unknown>) {
  const upstream = await startUpstream();
  const json = join(folder, `${name}.json`);
  const proxy = await startSourceProxy([
    "--upstream",
    upstream.url,
    "--fail-on-violation",
    "--reporter",
    `json:${json}`,
  ]);
  let code: number | null = null;
  try {
    await send(proxy.url, "GET", "v1/store/orders");
    // The first list's verdict (its line), waited for: the second is compared with it.
    while (!proxy.stdout().includes('"seq":1,')) await sleep(20);
    await send(proxy.url, "GET", "v1/store/orders");
    await after(proxy.url);
  } finally {
    ({ code } = await proxy.stop("SIGTERM"));
    await upstream.close();
  }
  const report = JSON.parse(readFileSync(json, "utf8")) as Report & { outcome: RunOutcome };
  return { code, report };
}

describe("a list whose verdict comes after writes that followed it", () => {
  it("a write refused late, sent after the list was over, does not hide the list's violation", async () => {
    const { code, report } = await lateVerdict("late-refusal", (url) =>
      send(url, "POST", "/other-api/things", { "x-status": "400", "x-delay": "1500" }),
    );
    assert.equal(code, 1, JSON.stringify(report.outcome));
    assert.equal(report.outcome.verdict, "failed");
  });

  it("a cancel sent after the list was over does not hide the list's violation", async () => {
    const { code, report } = await lateVerdict("late-cancel", (url) =>
      send(url, "DELETE", `v1/store/orders/${MISSING}`, { "x-delay": "1500" }),
    );
    assert.equal(code, 1, JSON.stringify(report.outcome));
  });

  it("a barrier after the list: the list fails, or is said not compared; never a pass", async () => {
    const { code, report } = await lateVerdict("late-barrier", (url) =>
      send(url, "POST", "/__control/reset", { "x-status": "200" }),
    );
    const checks = report.scenarios.flatMap((scenario) => scenario.checks);
    const notCompared = checks.some(
      (check) => check.status === "skipped" && /not compared with the lists before it/.test(check.message),
    );
    // Which comes first, the barrier or the verdict, is the machine's: either way the gate does not pass.
    assert.ok(
      (code === 1 && report.outcome.verdict === "failed") || (code === 2 && notCompared),
      `exit ${code}: ${JSON.stringify(report.outcome)} ${JSON.stringify(checks.filter((check) => check.status !== "passed"))}`,
    );
  });
});
