import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, get, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createGzip } from "node:zlib";
import { tempFolder } from "../../common/temp-folder.ts";
import { startSourceProxy } from "../../test-support/proxy-process.ts";
import type { Report } from "../reports/report.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";

// An answer that ends without being whole (the proxy's stop, --deadline, a client that leaves, an upstream
// that breaks off) is judged on what came of it: a violation there fails the gate, and an answer that showed
// none is not judged whole, which the gate does not pass either.

const folder = tempFolder("conformance-proxy-cut-");
const KEY = "Bearer cut-key-1";
const GOOD = '{"id":1,"petId":101,"quantity":1,"shipDate":"2026-11-02T10:00:00Z","complete":true}';
/** An order that exposes its status: a violation in the first order of the list. */
const EXPOSING = '{"id":2,"petId":1,"quantity":1,"status":"placed"}';

/** More than the proxy keeps of a body whole: such a list is judged as it streams. */
function longList(first: string): string {
  const orders = [first];
  for (let id = 10; orders.length < 20_000; id++) orders.push(GOOD.replace('"id":1', `"id":${id}`));
  return `[${orders.join(",")},`;
}

/** What the upstream answers a list with, by `?m=`: whole, or a start it never finishes. */
const ANSWERS: Record<string, { start: string; length?: number }> = {
  good: { start: `[${GOOD}]` },
  "bad-then-hold": { start: `[${EXPOSING},` },
  "bad-then-stall": { start: `[${EXPOSING},`, length: 4096 },
  "good-then-hold": { start: `[${GOOD},` },
  "long-bad-then-hold": { start: longList(EXPOSING) },
  "long-bad-then-stall": { start: longList(EXPOSING), length: 4 * 1024 * 1024 },
  // A root that is no array: what came proves the violation, however the body would have gone on.
  "object-then-hold": { start: '{"code":"x","message":"m",' },
  "long-object-then-hold": { start: `{"data":${longList(GOOD)}` },
};

let upstream: Server;
let upstreamUrl: string;

before(async () => {
  upstream = createServer((request, response) => {
    const mode = new URL(request.url ?? "/", "http://x").searchParams.get("m") ?? "good";
    const answer = ANSWERS[mode] ?? ANSWERS.good;
    const { start, length } = answer as { start: string; length?: number };
    response.on("error", () => {});
    if (mode === "gzip-bad-then-hold") {
      // Compressed: what came must be decoded before it is judged.
      response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      const gzip = createGzip();
      gzip.pipe(response);
      gzip.write(`[${EXPOSING},`);
      gzip.flush();
      return;
    }
    if (mode === "not-gzip-then-hold") {
      // Said to be gzip, and no gzip from its first bytes: undecodable whatever would have followed.
      response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      response.write("not gzip at all");
      return;
    }
    if (mode === "error-then-hold") {
      // A status the list never answers with, and an error body that never ends.
      response.writeHead(500, { "content-type": "application/json" });
      response.write('{"code":"internal","message":"');
      return;
    }
    const whole = mode === "good";
    response.writeHead(200, {
      "content-type": "application/json",
      ...(whole || length !== undefined ? { "content-length": String(length ?? start.length) } : {}),
    });
    // Only a whole answer ends; the others hold their connection open until the proxy lets go.
    if (whole) response.end(start);
    else response.write(start);
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});

after(() => {
  upstream.closeAllConnections();
  upstream.close();
});

/** Asks for the list; resolves once `until` appears in what came back, with the response to end or drop. */
function listUntil(proxyUrl: string, mode: string, until: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = get(
      `${proxyUrl}/store/orders?m=${mode}`,
      { headers: { authorization: KEY } },
      (response) => {
        let seen = "";
        response.on("error", () => {});
        response.on("data", (chunk: Buffer) => {
          seen += chunk.toString("latin1");
          if (seen.includes(until)) resolve(response);
        });
        response.on("end", () => reject(new Error(`the list ended before ${until}: ${seen.slice(0, 200)}`)));
      },
    );
    request.on("error", reject);
  });
}

/** Asks for the list and waits for the proxy to end it, whole or not. */
function listToItsEnd(proxyUrl: string, mode: string): Promise<void> {
  return new Promise((resolve) => {
    const request = get(
      `${proxyUrl}/store/orders?m=${mode}`,
      { headers: { authorization: KEY } },
      (response) => {
        response.on("error", () => resolve());
        response.on("close", () => resolve());
        response.resume();
      },
    );
    request.on("error", () => resolve());
  });
}

async function gate(name: string, extra: string[] = []) {
  const file = join(folder, `${name}.json`);
  const proxy = await startSourceProxy([
    "--upstream",
    upstreamUrl,
    "--fail-on-violation",
    "--reporter",
    `json:${file}`,
    ...extra,
  ]);
  return {
    proxy,
    async stop() {
      const { code, stderr, stdout } = await proxy.stop("SIGTERM");
      return { code, stderr, stdout, report: JSON.parse(readFileSync(file, "utf8")) as Report };
    },
  };
}

/** The failed checks' messages of a report. */
function failures(report: Report): string[] {
  return report.scenarios.flatMap((scenario) =>
    scenario.checks
      .filter((check) => check.status === "failed")
      .map((check) => `${check.id}: ${check.message}`),
  );
}

/** The JSON live line of exchange `seq`. */
function liveLine(stdout: string, seq: number): { verdict: string; bodyCut?: boolean; notWhole?: string } {
  const line = stdout.split("\n").find((text) => text.startsWith(`{"seq":${seq},`));
  assert.ok(line, stdout);
  return JSON.parse(line);
}

describe("the proxy's gate over answers that were not whole", { concurrency: true }, () => {
  it("an order exposing its status, then the proxy stopped while the list was still coming: exit 1", async () => {
    const { proxy, stop } = await gate("stop");
    await listToItsEnd(proxy.url, "good");
    await listUntil(proxy.url, "bad-then-hold", '"status"');
    const { code, stderr, stdout, report } = await stop();
    assert.equal(code, 1, stderr);
    assert.equal(report.traffic?.notWhole, 1);
    assert.equal(report.traffic?.cutOff, 1);
    const [failure] = failures(report);
    assert.match(
      failure ?? "",
      /^listOrders\.no-status-field: #2 GET \/v1\/store\/orders → 200, body cut: orders expose a status field: ids 2 \(judged in part: the answer was not whole \(cut off: still in flight when the proxy stopped\): the first 1 orders/,
    );
    const { verdict, bodyCut, notWhole } = liveLine(stdout, 2);
    assert.deepEqual(
      [verdict, bodyCut, notWhole],
      ["failed", true, "cut off: still in flight when the proxy stopped"],
    );
  });

  it("the same in a list long enough to be judged as it streams, stalled until --deadline: exit 1", async () => {
    const { proxy, stop } = await gate("deadline-long", ["--deadline", "2s"]);
    await listToItsEnd(proxy.url, "good");
    await listToItsEnd(proxy.url, "long-bad-then-stall");
    const { code, stderr, report } = await stop();
    assert.equal(code, 1, stderr);
    assert.match(failures(report).join("\n"), /orders expose a status field: ids 2 \(judged in part: /);
  });

  it("a long list and a compressed one cut at the stop while their judges still hold them: exit 1", async () => {
    const { proxy, stop } = await gate("stop-long");
    await listToItsEnd(proxy.url, "good");
    // The whole start has reached the client, so the proxy has passed all of it to the judge.
    await listUntil(proxy.url, "long-bad-then-hold", `"id":${10 + 20_000 - 2},`);
    const compressed = await new Promise<IncomingMessage>((resolve, reject) =>
      get(
        `${proxy.url}/store/orders?m=gzip-bad-then-hold`,
        { headers: { authorization: KEY } },
        (response) => {
          response.on("error", () => {});
          response.once("data", () => resolve(response));
        },
      ).on("error", reject),
    );
    assert.equal(compressed.headers["content-encoding"], "gzip");
    const { code, stderr, report } = await stop();
    assert.equal(code, 1, stderr);
    assert.equal(report.traffic?.exchanges, 3);
    assert.equal(report.traffic?.notWhole, 2);
    const failed = failures(report).join("\n");
    // The compressed one is judged on what came within the stop's grace. So is the long one, unless its
    // judges' thread is too far behind to answer within that grace on a machine under load: it is then
    // among the answers not judged whole (notWhole above), never passed.
    assert.match(
      failed,
      /body cut: orders expose a status field: ids 2 \(judged in part: .*\(51 bytes\) were judged/,
    );
  });

  it("an order exposing its status, then an upstream that stalls until --deadline: exit 1", async () => {
    const { proxy, stop } = await gate("deadline", ["--deadline", "1s"]);
    await listToItsEnd(proxy.url, "good");
    await listToItsEnd(proxy.url, "bad-then-stall");
    await listToItsEnd(proxy.url, "gzip-bad-then-hold");
    const { code, stderr, report } = await stop();
    assert.equal(code, 1, stderr);
    assert.equal(report.traffic?.notWhole, 2);
    assert.equal(report.traffic?.upstreamFailures, 2);
    assert.equal(failures(report).length, 2, failures(report).join("\n"));
    assert.match(
      failures(report).join("\n"),
      /orders expose a status field: ids 2 \(judged in part: the answer was not whole \(not complete within the 1000 ms --deadline\)/,
    );
  });

  /**
   * The documented `proxy --fail-on-violation -- COMMAND` recipe, the app's tests reading one list whole and
   * stopping to wait for a second (`mode`) once `until` came: its exit code, stderr and JSON report.
   */
  async function clientLeaves(name: string, mode: string, until: string) {
    const file = join(folder, `${name}.json`);
    const tests = `
      const get = (m, until) => new Promise((resolve) => {
        const request = require("node:http").get(process.env.PETSTORE_PROXY_URL + "/store/orders?m=" + m,
          { headers: { authorization: ${JSON.stringify(KEY)} } }, (response) => {
            let seen = "";
            response.on("data", (chunk) => { seen += chunk; if (until && seen.includes(until)) request.destroy(); });
            response.on("close", resolve);
            response.on("error", resolve);
          });
        request.on("error", resolve);
      });
      get("good").then(() => get(${JSON.stringify(mode)}, ${JSON.stringify(until)})).then(() => process.exit(0));`;
    const args = ["proxy", "--port", "0", "--upstream", upstreamUrl, "--fail-on-violation"];
    const { code, stderr } = await cli(
      [...args, "--reporter", `json:${file}`, "--", process.execPath, "-e", tests],
      NO_PROXY_ENV,
    );
    return { code, stderr, report: JSON.parse(readFileSync(file, "utf8")) as Report };
  }

  it("an order exposing its status, then a client that gave up under the documented -- COMMAND recipe: exit 1", async () => {
    const { code, stderr, report } = await clientLeaves("client-left", "bad-then-hold", '"status"');
    assert.equal(code, 1, stderr);
    // The client's leaving is the app's choice: said, not counted against the gate.
    assert.equal(report.traffic?.notWhole, 0);
    assert.match(report.warnings.join("\n"), /1 answer was left by the client before it was whole/);
    assert.match(
      failures(report).join("\n"),
      /orders expose a status field: ids 2 \(judged in part: the answer was not whole \(the client closed its connection before its answer was whole\)/,
    );
  });

  it("a status the operation never answers, its body never ending, left by its client: exit 1", async () => {
    const { code, stderr, report } = await clientLeaves("client-left-500", "error-then-hold", '"message":"');
    assert.equal(code, 1, stderr);
    assert.match(
      failures(report).join("\n"),
      /^listOrders\.status: #2 GET \/v1\/store\/orders → 500, body cut: .*\(judged in part: the answer was not whole \(the client closed its connection before its answer was whole\): its status and headers were judged\)/m,
    );
  });

  it("a list whose body began as no array, left by its client: exit 1, short or judged as it streams", async () => {
    for (const [mode, until] of [
      ["object-then-hold", '"message":"m",'],
      ["long-object-then-hold", '"complete":true},{"id":19000,'],
    ] as const) {
      const { code, stderr, report } = await clientLeaves(`client-left-${mode}`, mode, until);
      assert.equal(code, 1, `${mode}: ${stderr}`);
      assert.match(
        failures(report).join("\n"),
        /listOrders\.body: .*must be array \(judged in part: the answer was not whole \(the client closed its connection/,
        mode,
      );
    }
  });

  it("a list that does not decode as its Content-Encoding says, left by its client: exit 1", async () => {
    const { code, stderr, report } = await clientLeaves(
      "client-left-not-gzip",
      "not-gzip-then-hold",
      "at all",
    );
    assert.equal(code, 1, stderr);
    assert.match(
      failures(report).join("\n"),
      /listOrders\.body: .*does not decode as its Content-Encoding says: .*\(judged in part: the answer was not whole \(the client closed its connection/,
    );
  });

  it("a client that stops reading a list that broke no rule (a page left): exit 0, and said", async () => {
    const { code, stderr, report } = await clientLeaves(
      "client-left-clean",
      "good-then-hold",
      '"complete":true}',
    );
    assert.equal(code, 0, stderr);
    assert.equal(report.summary.failed, 0);
    assert.deepEqual([report.traffic?.notWhole, report.traffic?.judgedInPart], [0, 0]);
    assert.match(report.warnings.join("\n"), /1 answer was left by the client before it was whole/);
  });

  it("a list cut at the stop that showed no violation is not judged whole: exit 2, one line saying why", async () => {
    const { proxy, stop } = await gate("clean-cut");
    await listToItsEnd(proxy.url, "good");
    await listUntil(proxy.url, "good-then-hold", '"complete":true}');
    const { code, stderr, stdout, report } = await stop();
    assert.equal(code, 2, stderr);
    assert.equal(report.summary.failed, 0);
    assert.equal(report.traffic?.notWhole, 1);
    assert.equal(report.traffic?.judgedInPart, 1);
    assert.match(
      stderr,
      /^error: --fail-on-violation: 1 exchange ended without a whole answer \(cut at the stop, by --deadline, by the client leaving, or by the upstream: named in the report\), so what came was judged in part at most; nothing failed, but not everything was checked$/m,
    );
    assert.equal(liveLine(stdout, 2).verdict, "partly-judged");
    // Nowhere "passed": the list's checks on it were not judged whole.
    const listScenario = report.scenarios.find((scenario) => scenario.id === "listOrders");
    const statusCheck = listScenario?.checks.find((check) => check.id === "listOrders.no-status-field");
    assert.match(
      statusCheck?.message ?? "",
      /1 of 2 exchanges passed; 1 not judged \(.*not judged whole: the answer was not whole/,
    );
  });

  it("an ordinary run whose answers all came whole still exits 0", async () => {
    const { proxy, stop } = await gate("whole");
    await listToItsEnd(proxy.url, "good");
    await listToItsEnd(proxy.url, "good");
    const { code, stderr, report } = await stop();
    assert.equal(code, 0, stderr);
    assert.equal(report.traffic?.notWhole, 0);
    assert.equal(report.traffic?.judgedInPart, 0);
  });
});
