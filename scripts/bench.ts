import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { tempFolder } from "../common/temp-folder.ts";
import { BUNDLED_FIXTURES } from "../server/options.ts";
import { type MockProcess, startListeningProcess, startMockProcess } from "../test-support/spawn-mock.ts";
import { underAttack } from "./bench-attacks.ts";
import { bigLists } from "./bench-big-lists.ts";
import { checkerCost } from "./bench-checker.ts";
import { exploreCost } from "./bench-explore.ts";
import { judgementCost } from "./bench-judgement.ts";
import { proxyList } from "./bench-proxy-list.ts";
import { startup } from "./bench-startup.ts";
import { runDredd } from "./dredd.ts";
import { generateFixture } from "./generate-fixture.ts";
import { median } from "./median.ts";
import { startJsonServer, startPrismMock } from "./peers.ts";
import { startProxyCommand } from "./proxy-command.ts";

/**
 * `npm run bench`: every server is loaded from a separate autocannon process on 127.0.0.1, one at a time
 * and, for the ratios to the ceiling, at the same time as the ceiling, in one run, so the ratios compare
 * like with like on this machine. Prints one Markdown report and writes it
 * into BENCHMARKS.md between the markers, keeping the analysis around it.
 */

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const AUTOCANNON = join(ROOT, "tools/node_modules/.bin/autocannon");
const CEILING = join(ROOT, "scripts/ceiling-server.ts");
const FASTIFY_FLOOR = join(ROOT, "tools/fastify-floor-server.ts");
const ROUTER_FLOOR = join(ROOT, "tools/router-floor-server.ts");
const FORWARDING_FLOOR = join(ROOT, "scripts/forwarding-floor-server.ts");
const REDIS_REPLICAS = join(ROOT, "scripts/redis-replicas.ts");
const CONFORMANCE_CLI = join(ROOT, "dist/bin/petstore-conformance.js");
const BENCHMARKS = join(ROOT, "BENCHMARKS.md");
const DEV_KEY = "dev-key-123";
const BENCH_KEY = "bench-key";
const PENDING_ID = "9007199254740993";
const SHIPPED_ID = "9223372036854775807";

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "8" },
    warmup: { type: "string", default: "5" },
    scale: { type: "string", default: "1000,10000,100000" },
    repeats: { type: "string", default: "5" },
    rounds: { type: "string", default: "5" },
    sections: {
      type: "string",
      default:
        "startup,throughput,side-by-side,sessions,scale,conformance,proxy,store,big-lists,proxy-list,attacks,generated-attacks,checker,explore",
    },
    // Runs of the generated attacks on the proxy (conformance/test/proxy-attacks.test.ts's long version).
    "attack-runs": { type: "string", default: "100" },
    // The big-lists section: the list measured whole, and the one only ever judged as it streams.
    "big-orders": { type: "string", default: "1000000" },
    "huge-orders": { type: "string", default: "10000000" },
    sessions: { type: "string", default: "1000" },
    // Another build of the mock (a checkout's server/main.ts), measured beside the ceiling like this one.
    "also-mock": { type: "string" },
    // Another build of the proxy (a checkout's dist/bin/petstore-conformance.js), measured in the same rounds.
    "also-proxy": { type: "string" },
    // Another checkout (with its node_modules) measured under the same attacks, one after the other.
    "attack-baseline": { type: "string" },
    "no-write": { type: "boolean", default: false },
  },
});
const DURATION = Number(flags.duration);
const WARMUP = Number(flags.warmup);
const REPEATS = Number(flags.repeats);
const ROUNDS = Number(flags.rounds);
const CONNECTIONS = 4 * cpus().length;

/** The parts of autocannon's `-j` output this report reads. */
interface AutocannonResult {
  requests: { total: number; average: number };
  latency: { mean: number; p50: number; p99: number };
  statusCodeStats?: Record<string, { count: number }>;
}

interface Load {
  rps: number;
  /** Latencies in ms; autocannon's percentiles have 1 ms resolution, the mean does not. */
  mean: number;
  p50: number;
  p99: number;
  statuses: string;
  /** Server CPU time (user + system, its child processes included) per request, warm-up included; NaN if unknown. */
  cpuMicros: number;
}

/** One autocannon run from its own process: warm-up first, then the measured, fixed-duration run. */
function load(
  url: string,
  options: {
    method?: string;
    key?: string;
    headers?: Record<string, string>;
    connections?: number;
    duration?: number;
    serverPid?: number;
  } = {},
): Promise<Load> {
  const connections = options.connections ?? CONNECTIONS;
  const args = ["-j", "-n", "-c", String(connections), "-d", String(options.duration ?? DURATION)];
  args.push("--warmup", "[", "-c", String(connections), "-d", String(WARMUP), "]");
  if (options.method) args.push("-m", options.method);
  if (options.key !== undefined) args.push("-H", `authorization=Bearer ${options.key}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push("-H", `${name}=${value}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    const [command = AUTOCANNON, ...prefixArgs] = [...LOAD_PREFIX, AUTOCANNON];
    const cpuBefore = cpuTicks(options.serverPid);
    const child = spawn(command, [...prefixArgs, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}`));
      // With a warm-up autocannon prints two JSON documents, one per line; the measured run is the last.
      const cpu = cpuTicks(options.serverPid) - cpuBefore;
      const runs = output
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as AutocannonResult);
      const requests = runs.reduce((sum, run) => sum + run.requests.total, 0);
      const result = runs[runs.length - 1] as AutocannonResult;
      const stats = result.statusCodeStats ?? {};
      const statuses = Object.entries(stats)
        .map(([status, { count }]) => `${status}×${count}`)
        .join(" ");
      resolve({
        rps: result.requests.average,
        mean: result.latency.mean,
        p50: result.latency.p50,
        p99: result.latency.p99,
        statuses,
        cpuMicros: (cpu * TICK_MICROS) / requests,
      });
    });
  });
}

const TICK_MICROS = 1e6 / Number(spawnSync("getconf", ["CLK_TCK"]).stdout?.toString() || 100);

/**
 * CPU time used so far by a process and its descendants, in clock ticks, from /proc. Throughput alone
 * flatters the fastest servers once autocannon's own core is the limit; CPU per request does not.
 */
function cpuTicks(pid: number | undefined): number {
  if (pid === undefined || !existsSync("/proc")) return Number.NaN;
  const processes = readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => {
      try {
        // After the command name: state, ppid, …; utime and stime are the 12th and 13th fields (proc(5)).
        const fields = readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
        return {
          pid: Number(name),
          parent: Number(fields[1]),
          ticks: Number(fields[11]) + Number(fields[12]),
        };
      } catch {
        return undefined; // exited while being read
      }
    })
    .filter((entry) => entry !== undefined);
  const family = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of processes) {
      if (!family.has(entry.pid) && family.has(entry.parent)) {
        family.add(entry.pid);
        grew = true;
      }
    }
  }
  return processes.filter((entry) => family.has(entry.pid)).reduce((sum, entry) => sum + entry.ticks, 0);
}

interface Server {
  url: string;
  stop(): Promise<unknown>;
}

/** Our launchers give the child process, the peers' launchers its pid. */
type StartedServer = Server & { pid?: number | undefined; child?: { pid?: number } };
const pidOf = (server: StartedServer) => server.pid ?? server.child?.pid;

async function withServer<T>(start: () => Promise<StartedServer>, use: (server: Server) => Promise<T>) {
  const server = await start();
  pinServer(pidOf(server));
  try {
    return await use(server);
  } finally {
    await server.stop();
  }
}

// The server under test runs on core 0 and autocannon on core 1, so neither steals the other's cycles;
// on a single-core machine both share it and the report says so.
const PINNED = cpus().length >= 2 && spawnSync("taskset", ["-V"]).status === 0;
const LOAD_PREFIX = PINNED ? ["taskset", "-c", "1"] : [];

function pinServer(pid: number | undefined): void {
  if (PINNED && pid !== undefined) spawnSync("taskset", ["-a", "-cp", "0", String(pid)], { stdio: "ignore" });
}

const ceiling = (fixtures: string) => () => startListeningProcess(CEILING, ["--fixtures", fixtures]);
const ours = (fixtures: string) => () => startMockProcess(["--quiet", "--fixtures", fixtures]);

const ratio = (value: number, base: number) => `${((value / base) * 100).toFixed(0)}%`;
const ms = (value: number) => value.toFixed(2);
const micros = (value: number) => (Number.isNaN(value) ? "n/a" : value.toFixed(1));

interface Contender {
  name: string;
  start: () => Promise<StartedServer>;
  path: string;
  headers?: Record<string, string>;
}

/**
 * Loads each contender in turn, ROUNDS times over, all of them started up front, and keeps the round with
 * the median throughput for each: alternating rounds spread this machine's noise over every contender alike.
 */
async function rounds(contenders: Contender[], options: { method?: string; key: string }): Promise<Load[]> {
  const servers: StartedServer[] = [];
  try {
    for (const contender of contenders) {
      const server = await contender.start();
      pinServer(pidOf(server));
      servers.push(server);
    }
    const results: Load[][] = contenders.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, contender] of contenders.entries()) {
        const server = servers[index] as StartedServer;
        results[index]?.push(
          await load(`${server.url}${contender.path}`, {
            ...options,
            ...(contender.headers ? { headers: contender.headers } : {}),
            serverPid: pidOf(server),
          }),
        );
      }
    }
    return results.map((loads) => {
      const middle = median(loads.map((result) => result.rps));
      const chosen = loads.find((result) => result.rps === middle) as Load;
      return { ...chosen, cpuMicros: median(loads.map((result) => result.cpuMicros)) };
    });
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

async function throughput(): Promise<string[]> {
  const list = "/store/orders";
  const contenders: Contender[] = [
    { name: "bare node:http (ceiling)", start: ceiling(BUNDLED_FIXTURES), path: list },
    { name: "this mock (--quiet)", start: ours(BUNDLED_FIXTURES), path: list },
    {
      name: "Fastify alone: one route, no plugins",
      start: () => startListeningProcess(FASTIFY_FLOOR, ["--fixtures", BUNDLED_FIXTURES]),
      path: list,
    },
    {
      name: "node:http + find-my-way + cors: one route, no logging",
      start: () => startListeningProcess(ROUTER_FLOOR, ["--fixtures", BUNDLED_FIXTURES]),
      path: list,
    },
    { name: "Prism 5.14 mock (-v silent)", start: () => startPrismMock({ quiet: true }), path: list },
    {
      name: "json-server 0.17 (--quiet)",
      start: () => startJsonServer(BUNDLED_FIXTURES, { quiet: true }),
      path: list,
    },
  ];
  const listLoads = await rounds(contenders, { key: DEV_KEY });
  const loadOf = (name: string) => listLoads[contenders.findIndex((contender) => contender.name === name)];
  const rpsOf = (name: string) => loadOf(name)?.rps ?? Number.NaN;
  const top = rpsOf("bare node:http (ceiling)");
  const topCpu = loadOf("bare node:http (ceiling)")?.cpuMicros ?? Number.NaN;
  const mine = rpsOf("this mock (--quiet)");
  const prism = rpsOf("Prism 5.14 mock (-v silent)");

  return [
    "### Throughput: `GET /v1/store/orders` with a valid key, bundled fixtures (12 orders)",
    "",
    "Server CPU per request is the server process's user and system time (its child processes included) over",
    "the requests it answered, median of the rounds; it stays meaningful when autocannon's core, not the",
    "server's, limits the request rate. The ratio column reads as throughput would with the server's core as the limit.",
    "",
    "| Server | req/s | vs ceiling | server CPU µs/req | ceiling's CPU / this | mean ms | p50 ms | p99 ms | statuses |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ...listLoads.map(
      (r, index) =>
        `| ${contenders[index]?.name} | ${r.rps.toFixed(0)} | ${ratio(r.rps, top)} | ${micros(r.cpuMicros)} | ${ratio(topCpu, r.cpuMicros)} | ${ms(r.mean)} | ${r.p50} | ${r.p99} | ${r.statuses} |`,
    ),
    "",
    `This mock / Prism: **${(mine / prism).toFixed(1)}×**.`,
    "",
  ];
}

/** What one side of a side-by-side load sends. */
interface Shot {
  path: string;
  method?: string;
  key: string;
  headers?: Record<string, string>;
}

const percent = (value: number) => `${(value * 100).toFixed(0)}%`;

/**
 * Two servers, both pinned to core 0, each loaded by its own autocannon on core 1 at the same time, ROUNDS
 * times: whatever else the machine does weighs on both alike. Returns, per round, the first server's CPU
 * per request over the second's, and both figures.
 */
async function loadedTogether(
  starts: [() => Promise<StartedServer>, () => Promise<StartedServer>],
  shots: [Shot, Shot],
): Promise<{ ratios: number[]; micros: Array<[number, number]> }> {
  const servers: StartedServer[] = [];
  try {
    for (const start of starts) servers.push(await start());
    for (const server of servers) pinServer(pidOf(server));
    const ratios: number[] = [];
    const micros: Array<[number, number]> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [first, second] = await Promise.all(
        servers.map((server, index) => {
          const shot = shots[index] as Shot;
          return load(`${server.url}${shot.path}`, {
            ...(shot.method ? { method: shot.method } : {}),
            ...(shot.headers ? { headers: shot.headers } : {}),
            key: shot.key,
            connections: CONNECTIONS / 2,
            serverPid: pidOf(server),
          });
        }),
      );
      ratios.push((first as Load).cpuMicros / (second as Load).cpuMicros);
      micros.push([(first as Load).cpuMicros, (second as Load).cpuMicros]);
    }
    return { ratios, micros };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/**
 * The Redis store beside the in-memory default, loaded at the same time: CPU per request of the mock plus
 * its redis-server (both children of one launcher, so both are counted), then throughput of two replicas
 * behind HAProxy against one in-memory mock, loaded one after the other.
 */
async function storeCost(): Promise<string[]> {
  const onRedis = (replicas: number) => () =>
    startListeningProcess(REDIS_REPLICAS, ["--replicas", String(replicas), "--fixtures", BUNDLED_FIXTURES]);
  const rows: string[] = [];
  for (const [name, shot] of [
    ["`GET /v1/store/orders` (200)", { path: "/store/orders", key: DEV_KEY }],
    ["`DELETE` a missing order (404)", { path: "/store/orders/424242", key: DEV_KEY, method: "DELETE" }],
  ] as Array<[string, Shot]>) {
    const { ratios, micros } = await loadedTogether([ours(BUNDLED_FIXTURES), onRedis(1)], [shot, shot]);
    const middle = median(ratios);
    const [memory, redis] = micros[ratios.indexOf(middle)] as [number, number];
    rows.push(
      `| ${name} | ${memory.toFixed(1)} / ${redis.toFixed(1)} | **${(1 / middle).toFixed(2)}×** | ${(1 / Math.max(...ratios)).toFixed(2)}–${(1 / Math.min(...ratios)).toFixed(2)}× |`,
    );
  }
  const throughputRows: string[] = [];
  for (const [name, start] of [
    ["one mock, state in memory", ours(BUNDLED_FIXTURES)],
    ["one mock on Redis", onRedis(1)],
    ["two mocks on Redis behind HAProxy", onRedis(2)],
  ] as Array<[string, () => Promise<StartedServer>]>) {
    const result = await withServer(start, (server) =>
      load(`${server.url}/store/orders`, { key: DEV_KEY, serverPid: pidOf(server as StartedServer) }),
    );
    throughputRows.push(
      `| ${name} | ${result.rps.toFixed(0)} | ${ms(result.mean)} | ${result.p99} | ${micros(result.cpuMicros)} | ${result.statuses} |`,
    );
  }
  return [
    "### State in Redis (`--store`)",
    "",
    `Loaded together, ${ROUNDS} rounds of ${DURATION} s, median round. CPU per request counts the mock and its`,
    "redis-server.",
    "",
    "| Request | CPU µs/request, memory / Redis | Redis costs | Range over rounds |",
    "|---|---|---|---|",
    ...rows,
    "",
    `\`GET /v1/store/orders\`, ${CONNECTIONS} connections, ${DURATION} s, one after the other. The two replicas,`,
    "Redis and HAProxy share the machine's cores with each other and with the load generator.",
    "",
    "| Deployment | Requests/s | Mean ms | p99 ms | CPU µs/request (all processes) | Statuses |",
    "|---|---|---|---|---|---|",
    ...throughputRows,
  ];
}

interface Pairing {
  name: string;
  start: () => Promise<StartedServer>;
  path: string;
  method?: string;
  key: string;
}

/**
 * Each server loaded at the same time as the ceiling, both on core 0 and both autocannons on core 1, so
 * that whatever else the machine does at that moment weighs on both alike. Loaded one after the other,
 * the same server's ratio to the ceiling has moved by 30 points between runs; loaded together, by a few.
 */
async function sideBySide(): Promise<string[]> {
  const mockAt = (main: string) => () => startListeningProcess(main, ["--port", "0", "--quiet"]);
  const pairings: Pairing[] = [
    {
      name: "this mock: `GET /v1/store/orders` (200)",
      start: ours(BUNDLED_FIXTURES),
      path: "/store/orders",
      key: DEV_KEY,
    },
    {
      name: "this mock: `DELETE` a missing order (404)",
      start: ours(BUNDLED_FIXTURES),
      path: "/store/orders/424242",
      method: "DELETE",
      key: DEV_KEY,
    },
    {
      name: "this mock: `GET` without a valid key (401)",
      start: ours(BUNDLED_FIXTURES),
      path: "/store/orders",
      key: "wrong-key",
    },
    {
      name: "Fastify alone: one route, no plugins (200)",
      start: () => startListeningProcess(FASTIFY_FLOOR, ["--fixtures", BUNDLED_FIXTURES]),
      path: "/store/orders",
      key: DEV_KEY,
    },
    {
      name: "node:http + find-my-way + cors: one route (200)",
      start: () => startListeningProcess(ROUTER_FLOOR, ["--fixtures", BUNDLED_FIXTURES]),
      path: "/store/orders",
      key: DEV_KEY,
    },
    ...(flags["also-mock"]
      ? [
          {
            name: `\`${flags["also-mock"]}\` (200)`,
            start: mockAt(flags["also-mock"]),
            path: "/store/orders",
            key: DEV_KEY,
          },
        ]
      : []),
  ];
  const rows: string[] = [];
  for (const pairing of pairings) {
    const request: Shot = {
      path: pairing.path,
      key: pairing.key,
      ...(pairing.method ? { method: pairing.method } : {}),
    };
    const { ratios, micros } = await loadedTogether(
      [ceiling(BUNDLED_FIXTURES), pairing.start],
      [request, request],
    );
    const middle = median(ratios);
    const [topMicros, itsMicros] = micros[ratios.indexOf(middle)] as [number, number];
    rows.push(
      `| ${pairing.name} | ${topMicros.toFixed(1)} / ${itsMicros.toFixed(1)} | **${percent(middle)}** | ${percent(Math.min(...ratios))}–${percent(Math.max(...ratios))} |`,
    );
  }
  return [
    "### Side by side with the ceiling: server CPU per request, both loaded at once",
    "",
    `Each row: the ceiling and the server named, both pinned to core 0, each loaded by its own autocannon (${CONNECTIONS / 2} connections) at the same time; ${ROUNDS} rounds, the median round shown. The ceiling answers the 404 and 401 rows with its own precomputed Error records.`,
    "",
    "| Server and request | CPU µs/req ceiling / this | ceiling's CPU / this | range over rounds |",
    "|---|---:|---:|---:|",
    ...rows,
  ];
}

/** Spawns the mock and polls until the list answers 200: the start-up a user waits for. */
async function timeToFirstList(fixtures: string): Promise<{ ms: number; server: MockProcess }> {
  const started = performance.now();
  const server = await startMockProcess(["--quiet", "--fixtures", fixtures], {}, 60_000);
  for (;;) {
    const response = await fetch(`${server.url}/store/orders`, {
      headers: { authorization: `Bearer ${BENCH_KEY}` },
    });
    await response.arrayBuffer();
    if (response.status === 200) return { ms: performance.now() - started, server };
  }
}

function rssMegabytes(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kilobytes = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kilobytes / 1024;
}

async function scale(): Promise<string[]> {
  const folder = tempFolder("petstore-bench-");
  const rows: string[] = [];
  for (const count of flags.scale.split(",").map(Number)) {
    const fixtures = join(folder, `orders-${count}.json`);
    writeFileSync(fixtures, generateFixture(count, BENCH_KEY));
    const startups: number[] = [];
    for (let run = 0; run < 3; run++) {
      const { ms: startup, server } = await timeToFirstList(fixtures);
      startups.push(startup);
      await server.stop();
    }
    const { server } = await timeToFirstList(fixtures);
    const bytes = (
      await (
        await fetch(`${server.url}/store/orders`, { headers: { authorization: `Bearer ${BENCH_KEY}` } })
      ).arrayBuffer()
    ).byteLength;
    const mine = await load(`${server.url}/store/orders`, {
      key: BENCH_KEY,
      connections: 1,
      duration: Math.min(DURATION, 5),
    });
    const rss = rssMegabytes(server.child.pid);
    await server.stop();
    const top = await withServer(ceiling(fixtures), (s) =>
      load(`${s.url}/store/orders`, { key: BENCH_KEY, connections: 1, duration: Math.min(DURATION, 5) }),
    );
    rows.push(
      `| ${count.toLocaleString("en")} | ${(bytes / 1024).toFixed(0)} KiB | ${median(startups).toFixed(0)} | ${rss.toFixed(0)} | ${ms(mine.mean)} / ${mine.p99} | ${ms(top.mean)} / ${top.p99} | ${(mine.mean / top.mean).toFixed(2)}× |`,
    );
  }
  return [
    "### Scale: generated fixtures (`scripts/generate-fixture.ts`)",
    "",
    "Start-up is from spawning the process to the first 200 of the list (median of 3, Node and tsx start-up included). RSS is read after loading the list. Latency is one connection, sequential requests.",
    "",
    "| Orders | list body | start-up ms | RSS MiB | mock list mean / p99 ms | ceiling mean / p99 ms (same bytes) | mock / ceiling (mean) |",
    "|---:|---:|---:|---:|---:|---:|---|",
    ...rows,
  ];
}

const SESSIONS = Number(flags.sessions);

/** Creates `count` sessions, each with one order set to cancelled through the control API. */
async function fillSessions(origin: string, count: number, ids: readonly string[]): Promise<void> {
  for (let index = 0; index < count; index++) {
    const response = await fetch(`${origin}/__control/orders/${ids[index % ids.length]}`, {
      method: "PUT",
      headers: { "x-mock-session": `bench-${index}`, "content-type": "application/json" },
      body: '{"status":"cancelled"}',
    });
    if (response.status !== 200)
      throw new Error(`session ${index}: ${response.status} ${await response.text()}`);
  }
}

const withSessions =
  (fixtures: string, count: number, ids: readonly string[]) => async (): Promise<StartedServer> => {
    const server = await startMockProcess(["--quiet", "--fixtures", fixtures]);
    await fillSessions(new URL(server.url).origin, count, ids);
    return server;
  };

/** Sequential requests over one kept-alive connection: latency and server CPU per request. */
async function sequential(
  server: StartedServer,
  count: number,
  headersOf: (index: number) => Record<string, string>,
): Promise<{ meanMs: number; cpuMicros: number }> {
  const before = cpuTicks(pidOf(server));
  const started = performance.now();
  for (let index = 0; index < count; index++) {
    const response = await fetch(`${server.url}/store/orders`, {
      headers: { authorization: `Bearer ${DEV_KEY}`, ...headersOf(index) },
    });
    await response.arrayBuffer();
  }
  const meanMs = (performance.now() - started) / count;
  return { meanMs, cpuMicros: ((cpuTicks(pidOf(server)) - before) * TICK_MICROS) / count };
}

async function sessions(): Promise<string[]> {
  const bundledIds = ["2", "3", "5", "7", "8", "10"];
  const list = "/store/orders";
  const plain: Shot = { path: list, key: DEV_KEY };
  const withSessionsRows: Array<{ name: string; shot: Shot }> = [
    { name: `${SESSIONS.toLocaleString("en")} live sessions, no header`, shot: plain },
    {
      name: `${SESSIONS.toLocaleString("en")} live sessions, X-Mock-Session of one of them`,
      shot: { ...plain, headers: { "x-mock-session": "bench-7" } },
    },
  ];
  const sessionRows: string[] = [];
  for (const { name, shot } of withSessionsRows) {
    const { ratios, micros } = await loadedTogether(
      [withSessions(BUNDLED_FIXTURES, SESSIONS, bundledIds), ours(BUNDLED_FIXTURES)],
      [shot, plain],
    );
    const middle = median(ratios);
    const [theseMicros, plainMicros] = micros[ratios.indexOf(middle)] as [number, number];
    sessionRows.push(
      `| ${name} | ${plainMicros.toFixed(1)} / ${theseMicros.toFixed(1)} | **${percent(middle)}** | ${percent(Math.min(...ratios))}–${percent(Math.max(...ratios))} |`,
    );
  }

  const creations = 2_000;
  const perRequest = await withServer(ours(BUNDLED_FIXTURES), async (server) => {
    await sequential(server, creations, (index) => ({ "x-mock-session": `warm-up-${index % 10}` }));
    const warm = await sequential(server, creations, () => ({ "x-mock-session": "warm" }));
    const fresh = await sequential(server, creations, (index) => ({ "x-mock-session": `new-${index}` }));
    const none = await sequential(server, creations, () => ({}));
    return { warm, fresh, none };
  });

  const folder = tempFolder("petstore-bench-");
  const fixtures = join(folder, "orders-100000.json");
  writeFileSync(fixtures, generateFixture(100_000, DEV_KEY));
  const memory = await withServer(ours(fixtures), async (server) => {
    await (
      await fetch(`${server.url}/store/orders`, { headers: { authorization: `Bearer ${DEV_KEY}` } })
    ).arrayBuffer();
    const before = rssMegabytes(pidOf(server));
    // generateFixture moves every 100th id above 2^53; the others are their index.
    const ids: string[] = [];
    for (let index = 1; ids.length < SESSIONS; index++) if (index % 100 !== 0) ids.push(String(index));
    await fillSessions(new URL(server.url).origin, SESSIONS, ids);
    // Each session lists once too: an unchanged list body must be the seed's, not a copy.
    for (let index = 0; index < SESSIONS; index += 1) {
      const response = await fetch(`${server.url}/store/orders`, {
        headers: { authorization: `Bearer ${DEV_KEY}`, "x-mock-session": `bench-${index}` },
      });
      await response.arrayBuffer();
    }
    return { before, after: rssMegabytes(pidOf(server)) };
  });

  return [
    `### Sessions: ${SESSIONS.toLocaleString("en")} live sessions, each with one cancelled order`,
    "",
    "`GET /v1/store/orders` on the bundled fixtures. Each row: a mock holding the sessions and a mock with none, loaded at the same time as in the side-by-side table; the ratio is CPU per request of the one with sessions over the one without (100% is level).",
    "",
    "| Mock | CPU µs/req no sessions / this | this / no sessions | range over rounds |",
    "|---|---:|---:|---:|",
    ...sessionRows,
    "",
    `Sequential requests over one connection (${creations.toLocaleString("en")} each, one process):`,
    "",
    "| Request | mean ms | server CPU µs/req |",
    "|---|---:|---:|",
    `| no header | ${perRequest.none.meanMs.toFixed(3)} | ${micros(perRequest.none.cpuMicros)} |`,
    `| X-Mock-Session of a live session | ${perRequest.warm.meanMs.toFixed(3)} | ${micros(perRequest.warm.cpuMicros)} |`,
    `| X-Mock-Session of a new session (creates it) | ${perRequest.fresh.meanMs.toFixed(3)} | ${micros(perRequest.fresh.cpuMicros)} |`,
    "",
    `Memory over a 100,000-order fixture: RSS ${memory.before.toFixed(0)} MiB with the default world alone, ` +
      `${memory.after.toFixed(0)} MiB with ${SESSIONS.toLocaleString("en")} sessions each holding one cancelled order ` +
      `and each having listed the orders once: ${
        memory.after > memory.before
          ? `**${(((memory.after - memory.before) * 1024) / SESSIONS).toFixed(1)} KiB per session**`
          : "**no measurable growth** (the collector returned more than the sessions took)"
      }.`,
  ];
}

/** Wall time of a whole process, from spawn to exit. */
function timeProcess(
  command: string,
  args: string[],
): Promise<{ ms: number; stdout: string; code: number | null }> {
  const started = performance.now();
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  return new Promise((resolve) =>
    child.on("exit", (code) => resolve({ ms: performance.now() - started, stdout, code })),
  );
}

async function conformanceWallTime(): Promise<string[]> {
  const ourTimes: number[] = [];
  const dreddTimes: number[] = [];
  let requests = 0;
  let checks = 0;
  for (let run = 0; run < REPEATS; run++) {
    await withServer(ours(BUNDLED_FIXTURES), async (server) => {
      const result = await timeProcess(process.execPath, [
        CONFORMANCE_CLI,
        "--base-url",
        server.url,
        "--api-key",
        DEV_KEY,
        "--pending-order-id",
        PENDING_ID,
        "--shipped-order-id",
        SHIPPED_ID,
        "--reporter",
        "json",
      ]);
      if (result.code !== 0) throw new Error(`conformance run failed (exit ${result.code})`);
      const report = JSON.parse(result.stdout);
      requests = report.requests;
      checks = report.summary.passed + report.summary.failed;
      ourTimes.push(result.ms);
    });
    await withServer(ours(BUNDLED_FIXTURES), async (server) => {
      const started = performance.now();
      const run = await runDredd(server.url, {
        apiKey: DEV_KEY,
        pending: PENDING_ID,
        shipped: SHIPPED_ID,
        missing: "424242",
        jsonContentType: "application/json; charset=utf-8",
      });
      if (run.code !== 0) throw new Error(`Dredd failed:\n${run.output}`);
      dreddTimes.push(performance.now() - started);
    });
  }
  return [
    `### Conformance: a full run against a local mock, whole process (median of ${REPEATS})`,
    "",
    "| Tool | wall ms | requests | checks |",
    "|---|---:|---:|---:|",
    `| this suite (\`petstore-conformance\`, every scenario) | ${median(ourTimes).toFixed(0)} | ${requests} | ${checks} |`,
    `| Dredd 14.1 (6 transactions, hooks) | ${median(dreddTimes).toFixed(0)} | 6 | 18 (status, headers, body per transaction) |`,
  ];
}

/** The validating proxy in front of the mock, beside the mock alone and a bare forwarding proxy. */
async function proxyOverhead(): Promise<string[]> {
  if (!existsSync(CONFORMANCE_CLI)) throw new Error("the proxy section measures dist/: run npm run build");
  const upstream = await ours(BUNDLED_FIXTURES)();
  pinServer(pidOf(upstream));
  // All three are started here and stopped after the rounds, so that the proxy's memory can be read after them.
  const floorServer = await startListeningProcess(FORWARDING_FLOOR, ["--upstream", upstream.url]);
  const proxyServer = await startProxyCommand(upstream.url);
  const otherCli = flags["also-proxy"];
  const otherProxy = otherCli ? await startProxyCommand(upstream.url, otherCli) : undefined;
  const kept = (server: StartedServer) => async () => ({ ...server, stop: async () => {} });
  try {
    const list = "/store/orders";
    const contenders: Contender[] = [
      { name: "the mock, called directly", start: kept(upstream), path: list },
      { name: "bare node:http forwarding proxy (floor)", start: kept(floorServer), path: list },
      { name: "petstore-conformance proxy", start: kept(proxyServer), path: list },
      ...(otherProxy ? [{ name: "the other build's proxy", start: kept(otherProxy), path: list }] : []),
    ];
    const [direct, floor, proxy, other] = (await rounds(contenders, { key: DEV_KEY })) as [
      Load,
      Load,
      Load,
      Load | undefined,
    ];
    const rss = rssMegabytes(pidOf(proxyServer));
    const judging = await judgementCost(`${upstream.url}/store/orders`, DEV_KEY);
    const row = (name: string, load: Load, cpu: string) =>
      `| ${name} | ${load.rps.toFixed(0)} | ${ms(load.p50)} | ${ms(load.p99)} | ${cpu} | ${load.statuses} |`;
    return [
      "### The validating proxy: `GET /v1/store/orders` through it, bundled fixtures (12 orders)",
      "",
      "The mock is the upstream in every row (pinned with the proxy to core 0). CPU per request is the process",
      "in front of the mock: the mock itself in the first row, the proxy in the others.",
      "",
      "| Path | req/s | p50 ms | p99 ms | CPU µs/request | statuses |",
      "|---|---:|---:|---:|---:|---|",
      row("the mock, called directly", direct, micros(direct.cpuMicros)),
      row("bare node:http forwarding proxy → mock", floor, micros(floor.cpuMicros)),
      row("petstore-conformance proxy → mock", proxy, micros(proxy.cpuMicros)),
      ...(other ? [row(`\`${otherCli}\` proxy → mock`, other, micros(other.cpuMicros))] : []),
      "",
      `Added latency of the proxy over calling the mock directly: p50 +${ms(proxy.p50 - direct.p50)} ms, p99 +${ms(proxy.p99 - direct.p99)} ms` +
        ` (the forwarding floor: p50 +${ms(floor.p50 - direct.p50)} ms, p99 +${ms(floor.p99 - direct.p99)} ms).`,
      `The proxy's CPU per request is **${(proxy.cpuMicros / floor.cpuMicros).toFixed(2)}×** the forwarding floor's (target: at most 1.5×);` +
        ` its resident memory after ${ROUNDS} rounds: ${rss.toFixed(0)} MB.` +
        (other
          ? ` The other build's, in the same rounds: ${(other.cpuMicros / floor.cpuMicros).toFixed(2)}× (this one / that one: ${(proxy.cpuMicros / other.cpuMicros).toFixed(2)}×).`
          : ""),
      "",
      "The load repeats one list, so after the first the proxy judges each answer by comparing its bytes with",
      "the last one that passed. Judging alone, in one process without HTTP (median of 5 × 20,000):" +
        ` **${judging.same.toFixed(1)} µs** for an answer the same as the last, **${judging.different.toFixed(1)} µs** for answers that` +
        ` differ every time (parsed, validated, compared order by order): with every answer different, the proxy's CPU per request would be` +
        ` about ${((proxy.cpuMicros - judging.same + judging.different) / floor.cpuMicros).toFixed(2)}× the floor's.`,
    ];
  } finally {
    await Promise.all([proxyServer.stop(), floorServer.stop(), otherProxy?.stop()]);
    await upstream.stop();
  }
}

async function main(): Promise<void> {
  const chosen = new Set(flags.sections.split(","));
  const sections: string[][] = [];
  if (chosen.has("startup")) {
    if (!existsSync(CONFORMANCE_CLI))
      throw new Error("the start-up section measures dist/: run npm run build");
    sections.push(await withServer(ours(BUNDLED_FIXTURES), (server) => startup(ROOT, 15, server.url)));
  }
  if (chosen.has("throughput")) sections.push(await throughput());
  if (chosen.has("side-by-side")) sections.push(await sideBySide());
  if (chosen.has("sessions")) sections.push(await sessions());
  if (chosen.has("scale")) sections.push(await scale());
  if (chosen.has("conformance")) sections.push(await conformanceWallTime());
  if (chosen.has("proxy")) sections.push(await proxyOverhead());
  if (chosen.has("store")) sections.push(await storeCost());
  if (chosen.has("big-lists")) {
    if (!existsSync(CONFORMANCE_CLI))
      throw new Error("the big-lists section measures dist/: run npm run build");
    sections.push(await bigLists(Number(flags["big-orders"]), Number(flags["huge-orders"])));
  }
  if (chosen.has("proxy-list")) {
    if (!existsSync(CONFORMANCE_CLI))
      throw new Error("the proxy-list section measures dist/: run npm run build");
    sections.push(await proxyList(Number(flags["big-orders"]), Number(flags.rounds), flags["also-proxy"]));
  }
  if (chosen.has("attacks")) {
    const baseline = flags["attack-baseline"];
    sections.push(
      await underAttack([
        ...(baseline ? [{ name: `baseline (${baseline})`, dir: resolve(baseline) }] : []),
        { name: "this checkout", dir: ROOT },
      ]),
    );
  }
  if (chosen.has("generated-attacks")) sections.push(generatedAttacks(Number(flags["attack-runs"])));
  if (chosen.has("checker")) sections.push(checkerCost());
  if (chosen.has("explore")) sections.push(await exploreCost());
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const report = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpu}, Node ${process.version}, with`,
    "`npm run bench` (" +
      `autocannon 9: ${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s measured, median of ${ROUNDS} alternating rounds; ` +
      `${PINNED ? "server pinned to core 0, autocannon to core 1" : "server and autocannon unpinned"}).`,
    "",
    ...sections.flatMap((section) => [...section, ""]),
  ].join("\n");
  process.stdout.write(`${report}\n`);
  if (!flags["no-write"]) writeBenchmarks(report);
}

/**
 * The property test of generated attacks on the proxy, run long: hostile upstream answers and clients at
 * once, each run checked for a live process, answered clients, peak RSS, whole reports, a truthful exit
 * code and no secret shown. A failure stops the bench with fast-check's counterexample.
 */
function generatedAttacks(runs: number): string[] {
  const started = performance.now();
  execFileSync(
    process.execPath,
    ["--import", "tsx", "--test", "--test-reporter=dot", "conformance/test/proxy-attacks.test.ts"],
    { cwd: ROOT, env: { ...process.env, PROXY_ATTACK_RUNS: String(runs) }, stdio: "inherit" },
  );
  const seconds = Math.round((performance.now() - started) / 1000);
  return [
    "### Generated attacks on the proxy",
    "",
    `${runs} runs of \`conformance/test/proxy-attacks.test.ts\` (\`PROXY_ATTACK_RUNS=${runs}\`), ${seconds} s: every run held (the process alive, every client answered or cut by \`--deadline\`, peak RSS within \`--max-memory\` + 100 MiB, whole reports, the exit code the report calls for, no secret in any output).`,
  ];
}

const START = "<!-- bench:start -->";
const END = "<!-- bench:end -->";

function writeBenchmarks(report: string): void {
  let current = "";
  try {
    current = readFileSync(BENCHMARKS, "utf8");
  } catch {
    current = `# Benchmarks\n\n${START}\n${END}\n`;
  }
  const before = current.includes(START) ? current.slice(0, current.indexOf(START)) : `${current}\n`;
  const after = current.includes(END) ? current.slice(current.indexOf(END) + END.length) : "\n";
  writeFileSync(BENCHMARKS, `${before}${START}\n${report}${END}${after}`);
}

await main();
