import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempFolder } from "../common/temp-folder.ts";
import { ListJudge } from "../conformance/judging/list-judge.ts";
import { builtInContract } from "../contract/built-in.ts";
import { generatedFixtureText, generateOrders } from "../server/core/generate.ts";
import { createSeed } from "../server/core/seed.ts";
import { type MockProcess, startListeningProcess } from "../test-support/spawn-mock.ts";
import { median } from "./median.ts";
import { type PeerProcess, startPrismProxy } from "./peers.ts";
import { startProxyCommand } from "./proxy-command.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CONFORMANCE_CLI = join(ROOT, "dist/bin/petstore-conformance.js");
const MOCK_CLI = join(ROOT, "dist/mock/petstore-mock.cjs");
const KEY = "dev-key-123";
const CHUNK = 64 * 1024;
const contract = builtInContract();
const validateOrder = contract.schema("Order");
const orderPlan = contract.flatPlan("Order");

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const fixed = (value: number, digits = 0) => value.toFixed(digits);

/** A memory figure of a live process in bytes (VmHWM: its peak so far; VmRSS: now); 0 once it has exited. */
function memoryOf(pid: number | undefined, field: "VmHWM" | "VmRSS"): number {
  try {
    const kilobytes = Number(
      new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1],
    );
    return Number.isFinite(kilobytes) ? kilobytes * 1024 : 0;
  } catch {
    return 0;
  }
}

const peakRss = (pid: number | undefined) => memoryOf(pid, "VmHWM");
const rss = (pid: number | undefined) => memoryOf(pid, "VmRSS");

function judgeMs(bytes: Uint8Array): number {
  const started = performance.now();
  const judge = new ListJudge({ validateOrder, orderPlan });
  for (let at = 0; at < bytes.length; at += CHUNK) judge.write(bytes.subarray(at, at + CHUNK));
  const verdict = judge.end();
  if (verdict.invalid.count > 0 || verdict.syntax) throw new Error("the generated list failed its judgement");
  return performance.now() - started;
}

function parseMs(bytes: Uint8Array): number {
  const started = performance.now();
  JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8"));
  return performance.now() - started;
}

/** Alternating runs of the two, the median of each. */
function judgeBesideParse(bytes: Uint8Array, runs = 3): { judge: number; parse: number } {
  const judge: number[] = [];
  const parse: number[] = [];
  for (let run = 0; run < runs; run++) {
    judge.push(judgeMs(bytes));
    parse.push(parseMs(bytes));
  }
  return { judge: median(judge), parse: median(parse) };
}

async function firstList(url: string): Promise<void> {
  const response = await fetch(`${url}/store/orders`, { headers: { authorization: `Bearer ${KEY}` } });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`list answered ${response.status}`);
}

/** The built suite against the mock, every scenario in a session of its own: wall time and peak memory. */
async function suiteRun(
  mock: MockProcess,
  session: string,
): Promise<{ ms: number; peak: number; lists: number }> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      CONFORMANCE_CLI,
      "--base-url",
      mock.url,
      "--api-key",
      KEY,
      "--hooks",
      "mock-control",
      "--session",
      session,
      "--reporter",
      "json",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  let peak = 0;
  const poll = setInterval(() => {
    peak = Math.max(peak, peakRss(child.pid));
  }, 50);
  const code = await new Promise<number | null>((resolve) =>
    child.once("exit", (exitCode) => resolve(exitCode)),
  );
  clearInterval(poll);
  const ms = performance.now() - started;
  const report = JSON.parse(stdout) as { summary: { failed: number } };
  if (code !== 0 || report.summary.failed > 0)
    throw new Error(`the suite failed against the mock (exit ${code})`);
  const journal = (await (
    await fetch(`${mock.url.replace(/\/v1$/, "")}/__control/requests`, {
      headers: { "x-mock-session": session },
    })
  ).json()) as Array<{ method: string; path: string }>;
  const lists = journal.filter(
    (entry) => entry.method === "GET" && /^\/v1\/store\/orders(\?|$)/.test(entry.path),
  ).length;
  return { ms, peak, lists };
}

/** A GET of the list through a proxy: time to the first byte and to the last. */
function timedList(url: string): Promise<{ firstByte: number; total: number; bytes: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    request(`${url}/store/orders`, { headers: { authorization: `Bearer ${KEY}` } }, (response) => {
      let firstByte = 0;
      let bytes = 0;
      response.on("data", (chunk: Buffer) => {
        if (bytes === 0) firstByte = performance.now() - started;
        bytes += chunk.length;
      });
      response.on("end", () => resolve({ firstByte, total: performance.now() - started, bytes }));
      response.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

/** A small unrelated request (a refused cancel) every 10 ms while `busy` runs: the longest and p99 wait. */
async function waitsDuring(url: string, busy: Promise<unknown>): Promise<{ worst: number; p99: number }> {
  const waits: number[] = [];
  let done = false;
  void busy.finally(() => {
    done = true;
  });
  while (!done) {
    const started = performance.now();
    const response = await fetch(`${url}/store/orders/1`, { method: "DELETE" });
    await response.arrayBuffer();
    waits.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  waits.sort((a, b) => a - b);
  return { worst: waits.at(-1) ?? 0, p99: waits[Math.floor(waits.length * 0.99)] ?? 0 };
}

async function throughProxy(
  name: string,
  start: () => Promise<PeerProcess>,
  direct: { firstByte: number },
): Promise<string> {
  const proxy = await start();
  try {
    const list = timedList(proxy.url);
    const waits = await waitsDuring(proxy.url, list);
    const { firstByte, total } = await list;
    const peak = peakRss(proxy.pid);
    return `| ${name} | ${fixed(firstByte - direct.firstByte, 1)} | ${fixed(total)} | ${fixed(waits.worst)} | ${fixed(waits.p99)} | ${mb(peak)} |`;
  } finally {
    await proxy.stop();
  }
}

/** A list of `count` orders made as it is read, a mebibyte at a time, never whole: for lists too big to hold. */
function* listPieces(count: number): Generator<Buffer> {
  let text = "[";
  for (let index = 1; index <= count; index++) {
    text += `${index === 1 ? "" : ","}{"id":${index},"petId":${1000 + (index % 90_000)},"quantity":${1 + (index % 4)},"shipDate":"2026-${String(1 + (index % 12)).padStart(2, "0")}-${String(1 + (index % 28)).padStart(2, "0")}T08:30:00Z","complete":${index % 3 === 0}}`;
    if (text.length >= 1 << 20) {
      yield Buffer.from(text);
      text = "";
    }
  }
  yield Buffer.from(`${text}]`);
}

export async function bigLists(orders: number, hugeOrders: number): Promise<string[]> {
  const folder = tempFolder("petstore-big-");
  const fixture = join(folder, "orders.json");
  writeFileSync(fixture, [...generatedFixtureText(orders, 1)].join(""));
  const list = createSeed(generateOrders(orders, 1)).listBody;
  const lines: string[] = [];

  const alone = judgeBesideParse(list);
  const fileParse = median([0, 1, 2].map(() => parseMs(readFileSync(fixture))));

  const started = performance.now();
  // The built command, as users start it: the TypeScript loader's own start-up is no part of the mock's.
  const mock = await startListeningProcess(
    MOCK_CLI,
    ["--port", "0", "--quiet", "--fixtures", fixture],
    {},
    120_000,
  );
  let startup: number;
  let mockPeak: number;
  let sessionsRss: { before: number; after: number };
  let suite: { ms: number; peak: number; lists: number };
  let direct: { firstByte: number; total: number; bytes: number };
  let proxies: string[];
  try {
    await firstList(mock.url);
    startup = performance.now() - started;
    mockPeak = peakRss(mock.child.pid);
    // Sessions that each cancel one order and list: what a session costs beyond the shared seed.
    const before = rss(mock.child.pid);
    const sessions = 100;
    for (let session = 0; session < sessions; session++) {
      const headers = { authorization: `Bearer ${KEY}`, "x-mock-session": `bench-${session}` };
      await (
        await fetch(`${mock.url}/store/orders/${2 + session}`, { method: "DELETE", headers })
      ).arrayBuffer();
      await (await fetch(`${mock.url}/store/orders`, { headers })).arrayBuffer();
    }
    sessionsRss = { before, after: rss(mock.child.pid) };
    suite = await suiteRun(mock, "bench-suite");
    direct = await timedList(mock.url);
    proxies = [
      await throughProxy("petstore-conformance proxy", () => startProxyCommand(mock.url), direct),
      await throughProxy(
        "Prism 5.14 proxy (validating, no --errors)",
        () => startPrismProxy(mock.url),
        direct,
      ),
    ];
  } finally {
    await mock.stop();
  }

  const hugeStarted = performance.now();
  let hugePeak = 0;
  let hugeBytes = 0;
  const judge = new ListJudge({ validateOrder, orderPlan });
  for (const piece of listPieces(hugeOrders)) {
    judge.write(piece);
    hugeBytes += piece.length;
    hugePeak = Math.max(hugePeak, process.memoryUsage().rss);
  }
  const huge = judge.end();
  const hugeMs = performance.now() - hugeStarted;

  lines.push(
    `### Lists of any size: ${orders.toLocaleString("en")} orders (${mb(list.length)} MiB list)`,
    "",
    "The suite's judgement of one list (every order against the schema with its formats, ids exact and unique, read in 64 KiB chunks as a socket delivers them) beside `JSON.parse` of the same bytes (decoding included), alternating, median of 3:",
    "",
    "| judgement ms | JSON.parse ms | judgement / JSON.parse |",
    "|---:|---:|---:|",
    `| ${fixed(alone.judge)} | ${fixed(alone.parse)} | ${fixed(alone.judge / alone.parse, 2)}× |`,
    "",
    `A whole suite run (the built \`petstore-conformance\`, every scenario, \`--hooks mock-control\`) against the mock serving them: ${suite.lists} list requests.`,
    "",
    "| wall ms | list requests × JSON.parse ms | wall / that | suite peak RSS MiB |",
    "|---:|---:|---:|---:|",
    `| ${fixed(suite.ms)} | ${fixed(suite.lists * alone.parse)} | ${fixed(suite.ms / (suite.lists * alone.parse), 2)}× | ${mb(suite.peak)} |`,
    "",
    "The built mock (`dist/mock/petstore-mock.cjs`) started on the fixture file of those orders (`--fixtures`, the file written by `--generate N --write-fixtures`), from spawning the process to the first 200 of the list, beside `JSON.parse` of the file; peak RSS; RSS before and after 100 sessions that each cancel an order and list:",
    "",
    "| start-up ms | JSON.parse of the file ms | start-up / JSON.parse | mock peak RSS MiB | RSS before / after 100 sessions MiB |",
    "|---:|---:|---:|---:|---:|",
    `| ${fixed(startup)} | ${fixed(fileParse)} | ${fixed(startup / fileParse, 2)}× | ${mb(mockPeak)} | ${mb(sessionsRss.before)} / ${mb(sessionsRss.after)} |`,
    "",
    `A list through each validating proxy in front of the mock (direct: first byte after ${fixed(direct.firstByte, 1)} ms, whole list after ${fixed(direct.total)} ms), while a small request (a refused cancel) goes through the same proxy every 10 ms:`,
    "",
    "| proxy | added ms to first byte | whole list ms | worst wait of the others ms | p99 wait ms | proxy peak RSS MiB |",
    "|---|---:|---:|---:|---:|---:|",
    ...proxies,
    "",
    `A list of ${hugeOrders.toLocaleString("en")} orders (${mb(hugeBytes)} MiB) made and judged a mebibyte at a time in one process: ${fixed(hugeMs / 1000, 1)} s, peak RSS ${mb(hugePeak)} MiB, ${huge.count.toLocaleString("en")} orders, ${huge.invalid.count} invalid.`,
  );
  return lines;
}
