import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { tempFolder } from "../../common/temp-folder.ts";
import { residentMemory } from "../../test-support/process-memory.ts";
import {
  liveLinesWritten,
  NO_PROXY_ENV,
  type ProxyProcess,
  startProxyProcess,
} from "../../test-support/proxy-process.ts";
import { TARGET_KEY } from "../../test-support/target-server.ts";
import type { Report } from "../reports/report.ts";

// The proxy's judges' thread as users run it, the built command: within its share of --max-memory under
// many lists full of errors at once, and, killed mid-list, ending only the lists it was judging.

const folder = tempFolder("conformance-worker-judges-");
const MiB = 1024 * 1024;
const BUILT_BIN = new URL("../../dist/bin/petstore-conformance.js", import.meta.url).pathname;

function startBuiltProxy(args: readonly string[], nodeArgs: readonly string[] = []): Promise<ProxyProcess> {
  assert.ok(existsSync(BUILT_BIN), `${BUILT_BIN} is missing: run npx tsup first`);
  const env = { ...process.env, NO_COLOR: "", ...NO_PROXY_ENV };
  return startProxyProcess(process.execPath, [...nodeArgs, BUILT_BIN, "proxy", "--port", "0", ...args], {
    env,
  });
}

/** A list of about `bytes` whose every order breaks the Order schema and shows a status. */
function ordersFullOfErrors(bytes: number): Buffer {
  const parts: string[] = [];
  let size = 1;
  for (let id = 1; size < bytes; id++) {
    const order = `{"id":${id},"petId":"p${id % 97}","quantity":-${id % 5}.5,"shipDate":"soon ${id % 13}","complete":"no","status":"placed"}`;
    parts.push(order);
    size += order.length + 1;
  }
  return Buffer.from(`[${parts.join(",")}]`);
}

/** A list of valid orders of about `bytes`. */
function validOrders(bytes: number): Buffer {
  const parts: string[] = [];
  let size = 1;
  for (let id = 1; size < bytes; id++) {
    const order = `{"id":${id},"petId":${id % 1000},"quantity":${id % 7},"shipDate":"2026-01-01T00:00:00Z","complete":false}`;
    parts.push(order);
    size += order.length + 1;
  }
  return Buffer.from(`[${parts.join(",")}]`);
}

/** An upstream that answers every request with `body`, in pieces of 64 KiB `pieceMs` apart. */
async function upstreamOf(body: Buffer, pieceMs = 0): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_incoming, response: ServerResponse) => {
    response.writeHead(200, { "content-type": "application/json", "content-length": body.length });
    if (pieceMs === 0) {
      response.end(body);
      return;
    }
    void (async () => {
      for (let at = 0; at < body.length && !response.destroyed; at += 64 * 1024) {
        response.write(body.subarray(at, at + 64 * 1024));
        await sleep(pieceMs);
      }
      response.end();
    })();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** A list through the proxy, read to its end: its status and bytes, or how it failed. */
function fetchList(base: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    request(`${base}/store/orders`, { headers: { authorization: `Bearer ${TARGET_KEY}` } }, (answer) => {
      let bytes = 0;
      answer.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      answer.on("end", () => resolve({ status: answer.statusCode ?? 0, bytes }));
      answer.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

/** The code the report calls for under --fail-on-violation. */
function expectedCode(report: Report): number {
  if (report.summary.failed > 0) return 1;
  if ((report.traffic?.faults ?? 0) > 0) return 2;
  if ((report.traffic?.judgedInPart ?? 0) > 0) return 2;
  return (report.traffic?.judged ?? 0) === 0 ? 1 : 0;
}

function checkOf(report: Report, id: string) {
  return report.scenarios.flatMap((scenario) => scenario.checks).find((check) => check.id === id);
}

describe("the proxy's judges' thread as a process", () => {
  it("sixteen lists of 10 MB full of errors at once at 64MiB with --errors: within the budget + 100 MiB, each answered, the report whole and truthful", async () => {
    // The thread's heap within its share of the account, not beside it, keeps the peak within the goal.
    const upstream = await upstreamOf(ordersFullOfErrors(10_000_000));
    const reportFile = join(folder, "sixteen.json");
    const proxy = await startBuiltProxy([
      "--upstream",
      upstream.url,
      "--max-memory",
      "64MiB",
      "--errors",
      "--fail-on-violation",
      "--reporter",
      `json:${reportFile}`,
    ]);
    try {
      const answers = await Promise.all(Array.from({ length: 16 }, () => fetchList(proxy.url)));
      await liveLinesWritten(proxy, 16, 120_000);
      assert.equal(proxy.child.exitCode, null, "the proxy is alive");
      const peak = residentMemory(proxy.child.pid).peak / MiB;
      if (process.env.WORKER_JUDGES_VERBOSE) process.stderr.write(`peak ${Math.round(peak)} MiB\n`);
      assert.ok(peak <= 64 + 100, `peak RSS ${Math.round(peak)} MiB`);
      // Each list breaks the schema from its first order: replaced, whatever of it was judged.
      assert.deepEqual(
        answers.map((answer) => answer.status),
        Array(16).fill(502),
      );
      const { code, stderr } = await proxy.stop("SIGTERM");
      const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
      assert.equal(report.traffic?.exchanges, 16);
      assert.equal(report.traffic?.replaced, 16);
      assert.equal(report.traffic?.faults, 0, "no judge died");
      assert.doesNotMatch(JSON.stringify(report), /outgrew its heap/);
      assert.equal(checkOf(report, "listOrders.body")?.status, "failed");
      // A list judged in part is said so wherever it leaves a check unanswered, never passed.
      const inPart = report.traffic?.judgedInPart ?? 0;
      const uniqueIds = checkOf(report, "listOrders.unique-ids");
      if (inPart > 0)
        assert.match(
          uniqueIds?.message ?? "",
          new RegExp(`(${inPart} not judged|not judged on any of ${inPart})`),
        );
      assert.equal(code, expectedCode(report), stderr);
      assert.equal(code, 1);
    } finally {
      if (proxy.child.exitCode === null) proxy.child.kill("SIGKILL");
      await upstream.close();
    }
  });

  it("a judges' thread killed mid-list ends only the lists it was judging: the proxy goes on, the next list gets a new thread", async () => {
    // A thread's fault, injected: the first judges' thread throws once it has had ten blocks.
    const armed = join(folder, "armed");
    const inject = join(folder, "kill-first-judge.mjs");
    writeFileSync(
      inject,
      `import { isMainThread, parentPort } from "node:worker_threads";
import { writeFileSync } from "node:fs";
let first = false;
try { if (!isMainThread) { writeFileSync(${JSON.stringify(armed)}, "", { flag: "wx" }); first = true; } } catch {}
if (first && parentPort) {
  let blocks = 0;
  parentPort.on("message", (message) => {
    if (message && message.chunk && ++blocks === 10) setImmediate(() => { throw new Error("injected fault"); });
  });
}
`,
    );
    const list = validOrders(3 * MiB);
    const upstream = await upstreamOf(list, 10);
    const reportFile = join(folder, "killed.json");
    const proxy = await startBuiltProxy(
      ["--upstream", upstream.url, "--fail-on-violation", "--reporter", `json:${reportFile}`],
      ["--import", pathToFileURL(inject).href],
    );
    try {
      const during = await Promise.all([fetchList(proxy.url), fetchList(proxy.url)]);
      await liveLinesWritten(proxy, 2, 120_000);
      assert.ok(existsSync(armed), "the fault was injected");
      assert.deepEqual(during, [
        { status: 200, bytes: list.length },
        { status: 200, bytes: list.length },
      ]);
      assert.equal(proxy.child.exitCode, null, "the proxy is alive");
      const after = await fetchList(proxy.url);
      await liveLinesWritten(proxy, 3, 120_000);
      assert.deepEqual(after, { status: 200, bytes: list.length });
      const { code, stdout, stderr } = await proxy.stop("SIGTERM");
      const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
      const lines = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { verdict?: string; problems?: string[] });
      assert.equal(report.traffic?.exchanges, 3);
      // Not the app's fault: neither failed, each said not judged whole, naming the thread's fault.
      assert.equal(report.traffic?.judgedInPart, 2, `the two lists of the thread: ${JSON.stringify(lines)}`);
      assert.deepEqual(
        lines.map((line) => line.verdict),
        ["partly-judged", "partly-judged", "passed"],
      );
      assert.match(
        JSON.stringify(report),
        /not judged whole: the judges' thread failed \(injected fault\): nothing of this list was judged/,
      );
      assert.equal(report.summary.failed, 0);
      assert.match(
        checkOf(report, "listOrders.body")?.message ?? "",
        /1 of 3 exchanges passed; 2 not judged/,
      );
      assert.equal(code, expectedCode(report), stderr);
      assert.equal(code, 2);
    } finally {
      if (proxy.child.exitCode === null) proxy.child.kill("SIGKILL");
      await upstream.close();
    }
  });

  it("an order with a string of --max-string's default 16 MiB, less a little, at the default budget is judged whole", async () => {
    const note = "a".repeat(15 * MiB);
    const list = Buffer.from(
      `[{"id":1,"petId":2,"quantity":1,"shipDate":"2026-01-01T00:00:00Z","complete":false,"note":"${note}"}]`,
    );
    const upstream = await upstreamOf(list);
    const reportFile = join(folder, "long-string.json");
    const proxy = await startBuiltProxy(["--upstream", upstream.url, "--reporter", `json:${reportFile}`]);
    try {
      assert.deepEqual(await fetchList(proxy.url), { status: 200, bytes: list.length });
      await liveLinesWritten(proxy, 1, 120_000);
    } finally {
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
    const body = checkOf(report, "listOrders.body");
    assert.equal(body?.status, "passed", body?.message);
  });
});
