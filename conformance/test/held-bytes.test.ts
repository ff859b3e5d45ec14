import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { residentMemory } from "../../test-support/process-memory.ts";
import {
  listBytesThrough,
  liveLinesWritten,
  NO_PROXY_ENV,
  type ProxyProcess,
  startProxyProcess,
} from "../../test-support/proxy-process.ts";
import { TARGET_KEY } from "../../test-support/target-server.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-held-bytes-");
const MiB = 1024 * 1024;
const BUDGET = 64 * MiB;
const DEFAULT_BUDGET = 256 * MiB;
// The command as users run it: under tsx the sources start larger, and the judges' thread compiles its own.
const BUILT_BIN = new URL("../../dist/bin/petstore-conformance.js", import.meta.url).pathname;

function startBuiltProxy(args: readonly string[]): Promise<ProxyProcess> {
  assert.ok(existsSync(BUILT_BIN), `${BUILT_BIN} is missing: run npx tsup first`);
  const env = { ...process.env, NO_COLOR: "", ...NO_PROXY_ENV };
  return startProxyProcess(process.execPath, [BUILT_BIN, "proxy", "--port", "0", ...args], { env });
}

/** Lists that grow the judge's memory with their text, by the request's x-shape header. */
async function hostileUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const longString = Buffer.alloc(14 * MiB, 0x61);
  const wide = Array.from({ length: 2_000_000 }, (_, field) => `,"f${field}":${field}`).join("");
  const orders = ordinaryOrders(26 * 1000 * 1000);
  // Lists asked for together (x-together: N) wait, each inside its first long string, until all N are
  // there: the proxy holds them at once however the machine schedules their bytes.
  let arrived = 0;
  let allThere: () => void = () => {};
  const together = new Promise<void>((resolve) => {
    allThere = resolve;
  });
  const server = createServer((incoming, response: ServerResponse) => {
    response.writeHead(200, { "content-type": "application/json" });
    if (incoming.headers["x-shape"] === "wide") {
      response.end(`[{"id":1${wide}}]`);
      return;
    }
    if (incoming.headers["x-shape"] === "orders") {
      response.end(orders);
      return;
    }
    // Orders whose shipDate is a 14 MiB string, one after the other.
    void (async () => {
      response.write("[");
      for (let id = 1; id <= 3 && !response.destroyed; id++) {
        response.write(`${id > 1 ? "," : ""}{"id":${id},"quantity":1,"shipDate":"`);
        if (!response.write(longString)) await new Promise((done) => response.once("drain", done));
        if (id === 1 && incoming.headers["x-together"] !== undefined) {
          if (++arrived === Number(incoming.headers["x-together"])) allThere();
          await together;
        }
        response.write('"}');
      }
      response.end("]");
    })();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** A list of valid orders of about `bytes`, its size given by the upstream (Content-Length). */
function ordinaryOrders(bytes: number): Buffer {
  const parts: string[] = [];
  let size = 1;
  for (let id = 1; size < bytes; id++) {
    const order = `{"id":${id},"petId":${id % 1000},"quantity":${id % 7},"shipDate":"2026-01-01T00:00:00Z","complete":false}`;
    parts.push(order);
    size += order.length + 1;
  }
  return Buffer.from(`[${parts.join(",")}]`);
}

/** A list through the proxy in the shape asked for, read to its end and thrown away: its bytes. */
function drain(base: string, shape: string, together?: number): Promise<number> {
  return listBytesThrough(base, {
    authorization: `Bearer ${TARGET_KEY}`,
    "x-shape": shape,
    ...(together === undefined ? {} : { "x-together": String(together) }),
  });
}

/**
 * The built proxy at `memory` (64MiB unless given) in front of the hostile upstream; `send` drives it. Its
 * report, once its growth to the verdicts was found within `maxGrowth` (the judges' thread and the bytes on
 * their way to clients are in the account).
 */
async function atSmallBudget(
  send: (base: string) => Promise<number[]>,
  maxGrowth = BUDGET + 100 * MiB,
  args: readonly string[] = [],
  memory = "64MiB",
): Promise<Report> {
  const upstream = await hostileUpstream();
  const reportFile = join(folder, `report-${Date.now()}.json`);
  const proxy = await startBuiltProxy([
    "--upstream",
    upstream.url,
    "--max-memory",
    memory,
    "--reporter",
    `json:${reportFile}`,
    ...args,
  ]);
  try {
    const idle = residentMemory(proxy.child.pid).peak;
    const read = await send(proxy.url);
    // The verdict may come after the client's last byte: a stop before it would report the list cut off.
    await liveLinesWritten(proxy, read.length);
    assert.ok(
      read.every((bytes) => bytes > 24 * MiB),
      "every list reaches the client whole",
    );
    assert.equal(proxy.child.exitCode, null, "the proxy is alive");
    const grown = residentMemory(proxy.child.pid).peak - idle;
    if (process.env.HELD_BYTES_VERBOSE) process.stderr.write(`grew ${Math.round(grown / MiB)} MiB\n`);
    assert.ok(grown <= maxGrowth, `grew ${Math.round(grown / MiB)} MiB past its start`);
  } finally {
    await proxy.stop("SIGTERM");
    await upstream.close();
  }
  return JSON.parse(readFileSync(reportFile, "utf8")) as Report;
}

function listBody(report: Report) {
  return report.scenarios
    .flatMap((scenario) => scenario.checks)
    .find((check) => check.id === "listOrders.body");
}

describe("the proxy's one memory budget (--max-memory)", () => {
  it("an order with 2,000,000 fields at 64MiB is not built: judged in part, over the memory budget", async () => {
    // One list leaves the forwarding's reserve unspent: it grew 89-101 MiB, and 142-151 MiB before the
    // account covered the judges' thread and the forwarding, so the bound here is the budget + 64 MiB.
    const report = await atSmallBudget(async (base) => [await drain(base, "wide")], BUDGET + 64 * MiB);
    const body = listBody(report);
    assert.equal(body?.status, "skipped");
    assert.match(
      body?.message ?? "",
      // Refused as the order grows, or as its bytes wait for the judge: either way not one order is built.
      /not judged whole: over the memory budget \((a value needing more memory than the budget has left at byte 1\)|64 MiB, --max-memory\): .* the first 0 orders)/,
    );
  });

  it("sixteen lists of 14 MiB strings held at once at 64MiB: refused past the account, never passed, bounded", async () => {
    const report = await atSmallBudget((base) =>
      Promise.all(Array.from({ length: 16 }, () => drain(base, "strings", 16))),
    );
    assert.notEqual(listBody(report)?.status, "passed");
    assert.match(JSON.stringify(report), /over the memory budget/);
  });

  it("sixteen lists of 26 MB held with --errors at 64MiB: each waits for room or goes on, judged, bounded", async () => {
    // The goal, the budget + 100 MiB: past their first mebibyte held answers wait in files, not in
    // the proxy's memory.
    const report = await atSmallBudget(
      (base) => Promise.all(Array.from({ length: 16 }, () => drain(base, "orders"))),
      BUDGET + 100 * MiB,
      ["--errors"],
    );
    // Valid lists: none replaced, whether passed on after their verdict or let go of for room before it.
    assert.equal(report.traffic?.replaced, 0);
    assert.equal(report.traffic?.faults, 0);
    assert.equal(report.summary.failed, 0);
  });

  it("sixteen lists of 26 MB held with --errors at the default budget: the judged blocks' pages go back at once", async () => {
    // The goal is a peak of the budget + 100 MiB, and the built command starts at about 60 MiB: growth
    // within the budget + 40 MiB. Blocks judged and left to the judges' thread's collector pass it.
    const report = await atSmallBudget(
      (base) => Promise.all(Array.from({ length: 16 }, () => drain(base, "orders"))),
      DEFAULT_BUDGET + 40 * MiB,
      ["--errors"],
      "256MiB",
    );
    assert.equal(report.traffic?.replaced, 0);
    assert.equal(report.traffic?.faults, 0);
    assert.equal(report.summary.failed, 0);
  });
});
