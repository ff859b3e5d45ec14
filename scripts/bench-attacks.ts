import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { connect, type Socket } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { tempFolder } from "../common/temp-folder.ts";
import { type RedisService, startRedis } from "../test-support/services.ts";

/**
 * What strangers and hostile inputs cost the mock and the judge, beside the same figures without them:
 * peak memory and the worst wait of an ordinary client. Each figure is measured for this checkout and,
 * with `--baseline DIR`, for another checkout (with its node_modules) in the same run, one after the other.
 *
 *   npx tsx scripts/bench-attacks.ts [--baseline DIR]... [--list-wait-only | --memory-only | --redis-only]
 *     [--cases strings,orders,...] [--built] [--built-only] [--built-baseline DIR]...
 *
 * `--cases` runs only the named rows of the memory table: strings, orders, orders-errors, errors, errors25,
 * errors-default, orders-default, orders-errors-default, wide, gzip, million, small-ids, nested, keys,
 * nested-default, suite-strings, suite-errors, suite-wide. `--built` adds this checkout's built command (`dist/`, made by
 * `npx tsup` beforehand) to the memory table's checkouts: what users run, beside the sources under tsx.
 * `--built-only` measures the built commands alone; `--built-baseline DIR` adds DIR's built command (its
 * `dist/`, a `package.json` and `node_modules` beside it) before this checkout's, to compare in one run.
 */

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const KEY = "dev-key-123";

interface Started {
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/** A process that listens at `url`, stopped with `signal` and waited for. */
function started(child: ChildProcess, url: string, output: () => string, signal: NodeJS.Signals): Started {
  return {
    url,
    child,
    output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((done) => child.once("exit", done));
      child.kill(signal);
      await exited;
    },
  };
}

/**
 * The mock of a checkout, from its sources, on a free port; `fds`: a file-descriptor limit to run under;
 * `probe`: with this checkout's event-loop delay probe loaded (scripts/loop-delay-probe.ts).
 */
async function startMock(checkout: string, args: string[], fds?: number, probe = false): Promise<Started> {
  const command = [
    process.execPath,
    "--import",
    "tsx",
    ...(probe ? ["--import", join(ROOT, "scripts/loop-delay-probe.ts")] : []),
    join(checkout, "server/main.ts"),
    "--port",
    "0",
    "--quiet",
    ...args,
  ];
  const child =
    fds === undefined
      ? spawn(command[0] as string, command.slice(1), { cwd: checkout, stdio: ["ignore", "pipe", "pipe"] })
      : spawn("sh", ["-c", `ulimit -n ${fds} && exec "$0" "$@"`, ...command], {
          cwd: checkout,
          stdio: ["ignore", "pipe", "pipe"],
        });
  const { url, output } = await listening(child, "the mock");
  return started(child, url, output, "SIGKILL");
}

/**
 * The address a started process says it listens on, in either stream, and everything it has written so far;
 * rejects when it exits first.
 */
async function listening(child: ChildProcess, name: string): Promise<{ url: string; output: () => string }> {
  let output = "";
  const url = await new Promise<string>((done, fail) => {
    const read = (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (http:\/\/[^\s,]+)/.exec(output);
      if (match?.[1]) done(match[1]);
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => fail(new Error(`${name} exited ${code}: ${output}`)));
  });
  return { url, output: () => output };
}

/** The mock's own process: through `sh -c … exec` it is the same pid. */
function peakMegabytes(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Math.round(Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]) / 1024);
  } catch {
    return Number.NaN;
  }
}

function send(
  agent: Agent,
  url: URL,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<number> {
  return new Promise((done) => {
    const sent = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        agent,
        method: options.method ?? "GET",
        headers: options.headers,
      },
      (answer) => {
        answer.resume();
        answer.on("end", () => done(answer.statusCode ?? 0));
      },
    );
    sent.on("error", () => done(0));
    sent.setTimeout(120_000, () => sent.destroy());
    sent.end(options.body);
  });
}

/** An ordinary client asking every `everyMs` while `during` runs: its worst wait, in ms. */
async function worstWaitDuring(
  url: URL,
  path: string,
  during: () => Promise<void>,
  everyMs = 20,
): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let running = true;
  let worst = 0;
  const client = (async () => {
    while (running) {
      const started = performance.now();
      await send(agent, url, path, { headers: { authorization: `Bearer ${KEY}` } });
      worst = Math.max(worst, performance.now() - started);
      await new Promise((done) => setTimeout(done, everyMs));
    }
  })();
  await during();
  running = false;
  await client;
  agent.destroy();
  return Math.round(worst);
}

/** 50,000 requests with no key or a wrong one, 14 KiB paths, over a thousand session names. */
async function unauthenticatedFlood(checkout: string, flood: boolean): Promise<string> {
  const mock = await startMock(checkout, []);
  try {
    const url = new URL(mock.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const longPath = `/v1/store/orders/${"9".repeat(14 * 1024)}`;
    const wait = await worstWaitDuring(url, "/v1/store/orders", async () => {
      if (!flood) return new Promise((done) => setTimeout(done, 5_000));
      let next = 0;
      const worker = async () => {
        while (next < 50_000) {
          const index = next++;
          await send(agent, url, longPath, {
            method: "DELETE",
            headers: {
              "x-mock-session": `stranger-${index % 1000}`,
              ...(index % 2 === 0 ? { authorization: "Bearer wrong" } : {}),
            },
          });
        }
      };
      await Promise.all(Array.from({ length: 64 }, worker));
    });
    agent.destroy();
    const sessions = await fetch(`${url.origin}/__control/sessions`).then((answer) => answer.text());
    const count = (JSON.parse(sessions) as unknown[]).length;
    return `| ${flood ? "50,000 unauthenticated requests (14 KiB paths, 1,000 session names)" : "no flood, 5 s"} | ${peakMegabytes(mock.child.pid)} MB | ${wait} ms | ${count} |`;
  } finally {
    await mock.stop();
  }
}

/** The dashboard's and the mock-control hook's reads of a million-order world beside a health check. */
async function controlPlane(checkout: string, paged: boolean): Promise<string> {
  const mock = await startMock(checkout, ["--generate", "1000000"]);
  try {
    const url = new URL(mock.url);
    const agent = new Agent({ keepAlive: true });
    const wait = await worstWaitDuring(url, "/__health", async () => {
      for (let read = 0; read < 5; read++)
        await send(agent, url, paged ? "/__control/orders?limit=100" : "/__control/orders");
    });
    agent.destroy();
    return `| ${paged ? "5 page reads (`?limit=100`)" : "5 reads of `/__control/orders` as it answers without a query"} | ${peakMegabytes(mock.child.pid)} MB | ${wait} ms |`;
  } finally {
    await mock.stop();
  }
}

/** The worst event-loop delay since the last time it was asked, from the process's probe. */
async function loopDelayMax(mock: Started): Promise<number> {
  const before = mock.output().length;
  mock.child.kill("SIGUSR2");
  for (;;) {
    const match = /loop-delay-max-ms (\S+)/.exec(mock.output().slice(before));
    if (match) return Number(match[1]);
    await new Promise((done) => setTimeout(done, 10));
  }
}

/**
 * A session's first list after it added orders through the control API (what `--hooks mock-control`
 * does), over a million-order world: the mock's worst event-loop delay and `/__health`'s worst wait.
 */
async function sessionListAfterAdds(checkout: string, added: number, store: string[] = []): Promise<string> {
  const mock = await startMock(checkout, ["--generate", "1000000", ...store], undefined, true);
  try {
    const url = new URL(mock.url);
    const agent = new Agent({ keepAlive: true });
    const session = { "x-mock-session": "adds" };
    for (let index = 0; index < added; index++) {
      await send(agent, url, `/__control/orders/${9_000_000_000_000_000n + BigInt(index)}`, {
        method: "PUT",
        headers: { ...session, "content-type": "application/json" },
        body: '{"petId":7,"quantity":1,"status":"pending"}',
      });
    }
    await loopDelayMax(mock);
    const wait = await worstWaitDuring(url, "/__health", async () => {
      await send(agent, url, "/v1/store/orders", { headers: { ...session, authorization: `Bearer ${KEY}` } });
    });
    const delay = await loopDelayMax(mock);
    agent.destroy();
    return `| ${added.toLocaleString("en")} orders added${store.length > 0 ? " (Redis)" : ""} | ${delay} ms | ${wait} ms |`;
  } finally {
    await mock.stop();
  }
}

let redisPrefixes = 0;
/** Options that put a mock's worlds in this Redis, under keys of their own. */
const inRedis = (redis: RedisService) => [
  "--store",
  redis.url,
  "--store-prefix",
  `bench-${++redisPrefixes}:`,
];

/**
 * `GET /__control/sessions` in Redis mode over a million-order world: 100 sessions that cancelled an order
 * and one whose hash 200,000 cancels grew, five reads of the page: worst event-loop delay and `/__health`'s
 * worst wait.
 */
async function redisSessionsPage(checkout: string, redis: RedisService): Promise<string> {
  const store = inRedis(redis);
  const mock = await startMock(checkout, ["--generate", "1000000", ...store], undefined, true);
  const client = new Redis(redis.url);
  try {
    const url = new URL(mock.url);
    const agent = new Agent({ keepAlive: true });
    for (let index = 0; index < 101; index++) {
      await send(agent, url, "/v1/store/orders/2", {
        method: "DELETE",
        headers: { authorization: `Bearer ${KEY}`, "x-mock-session": `page-${index}` },
      });
    }
    const pipeline = client.pipeline();
    for (let id = 1; id <= 200_000; id++) pipeline.hset(`${store[3]}w:s:page-0`, `s:${id}`, "cancelled");
    await pipeline.exec();
    await loopDelayMax(mock);
    const wait = await worstWaitDuring(url, "/__health", async () => {
      for (let read = 0; read < 5; read++) await send(agent, url, "/__control/sessions");
    });
    const delay = await loopDelayMax(mock);
    agent.destroy();
    return `| 5 reads of \`/__control/sessions\` (101 sessions, one with 200,000 cancels) | ${delay} ms | ${wait} ms |`;
  } finally {
    client.disconnect();
    await mock.stop();
  }
}

/** Redis mode's lists and session pages over a million-order world, on a redis-server of its own. */
export async function redisMode(checkouts: ReadonlyArray<{ name: string; dir: string }>): Promise<string[]> {
  const redis = await startRedis();
  const lines = ["### Redis mode, a million-order world"];
  try {
    for (const { name, dir } of checkouts) {
      lines.push(
        "",
        `**${name}**`,
        "",
        "| A million-order world in Redis mode | worst event-loop delay | `/__health` worst wait (every 20 ms) |",
        "|---|---|---|",
        await sessionListAfterAdds(dir, 1, inRedis(redis)),
        await sessionListAfterAdds(dir, 1_000, inRedis(redis)),
        await redisSessionsPage(dir, redis),
      );
    }
  } finally {
    await redis.stop();
  }
  return lines;
}

/** Idle connections past the file descriptors, then a new client, under a limit of 1,024 of them. */
async function idleConnections(checkout: string, idle: number): Promise<string> {
  const mock = await startMock(checkout, [], 1024);
  const sockets: Socket[] = [];
  try {
    const url = new URL(mock.url);
    for (let index = 0; index < idle; index++) {
      const socket = connect(Number(url.port), url.hostname);
      socket.on("error", () => {});
      await new Promise((done) => socket.once("connect", done));
      sockets.push(socket);
    }
    const started = performance.now();
    const agent = new Agent({ keepAlive: false });
    const status = await Promise.race([
      send(agent, url, "/v1/store/orders", { headers: { authorization: `Bearer ${KEY}` } }),
      new Promise<number>((done) => setTimeout(() => done(-1), 10_000)),
    ]);
    const elapsed = `${Math.round(performance.now() - started)} ms`;
    const waited =
      status === -1
        ? "no answer within 10,000 ms"
        : status === 0
          ? `refused: the connection was closed unanswered after ${elapsed}`
          : `${status} after ${elapsed}`;
    return `| ${idle.toLocaleString("en")} idle connections open | ${waited} |`;
  } finally {
    for (const socket of sockets) socket.destroy();
    await mock.stop();
  }
}

/**
 * The judge's time on a list of ids crafted to collide under a fixed hash (the index's before it was keyed)
 * and on ordinary ids of the same count, descending so that both go through the hash table: median of 5
 * alternating rounds after 2 of warm-up.
 */
function collidingIds(checkout: string): string {
  const script = `
    const { judgeListBody } = await import(${JSON.stringify(join(checkout, "conformance/judging/list-judge.ts"))});
    const { builtInContract } = await import(${JSON.stringify(join(checkout, "contract/built-in.ts"))});
    const A = 0x9e3779b1, B = 0x85ebca6b;
    let inverse = A;
    for (let round = 0; round < 5; round++) inverse = Math.imul(inverse, 2 - Math.imul(A, inverse));
    const crafted = [], ordinary = [];
    for (let hi = 30000; hi > 0; hi--) {
      const lo = Math.imul(0x12345678 ^ Math.imul(hi, B), inverse);
      crafted.push(((BigInt(hi) << 32n) | BigInt(lo >>> 0)).toString());
      ordinary.push(((BigInt(hi) << 32n) | BigInt((hi * 2654435761) >>> 0)).toString());
    }
    const body = (ids) => Buffer.from("[" + ids.map((id) => '{"id":' + id + "}").join(",") + "]");
    const validateOrder = builtInContract().schema("Order");
    const time = (ids) => { const bytes = body(ids); const started = performance.now(); judgeListBody(bytes, { validateOrder }); return performance.now() - started; };
    const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
    const times = { crafted: [], ordinary: [] };
    // Warmed up, then alternated: the first rounds measure the compiler, not the index.
    for (let round = 0; round < 7; round++) {
      times.crafted.push(time(crafted));
      times.ordinary.push(time(ordinary));
    }
    const kept = (values) => median(values.slice(2));
    console.log(JSON.stringify({ crafted: kept(times.crafted), ordinary: kept(times.ordinary), bytes: body(crafted).length }));
  `;
  const output = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: checkout,
    encoding: "utf8",
    maxBuffer: 1024 * 1024,
  });
  const { crafted, ordinary, bytes } = JSON.parse(output) as {
    crafted: number;
    ordinary: number;
    bytes: number;
  };
  return `| ${Math.round(bytes / 1024)} KiB, 30,000 ids | ${Math.round(crafted)} ms | ${Math.round(ordinary)} ms | ${(crafted / ordinary).toFixed(1)}× |`;
}

/** Bytes of one order as the hostile lists below write them, with a fresh id. */
function orderBytes(id: number): string {
  return `{"id":${id},"petId":${id % 1000},"quantity":${id % 7},"shipDate":"2026-01-01T00:00:00Z","complete":false}`;
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

/** A list of ordinary orders of about `bytes`, from id `first` on. */
function ordersList(bytes: number, first = 1): Buffer {
  const parts: string[] = [];
  let size = 1;
  for (let id = first; size < bytes; id++) {
    const order = orderBytes(id);
    parts.push(order);
    size += order.length + 1;
  }
  return Buffer.from(`[${parts.join(",")}]`);
}

/** A value made the first time it is asked for, then kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/**
 * The hostile lists, by path: `strings` orders whose shipDate is a 14 MiB string, four of them (a
 * never-ending list as far as a reader that keeps the string is concerned); `orders` 25 MB of ordinary
 * orders; `errors` 10 MB (`errors25` 25 MB) of orders that each break the schema; `wide` one order with
 * 2,000,000 fields; `gzip` about 600 MB of orders sent gzip-encoded; `million` a list of 1,000,000 orders.
 * Each is made when first asked for. Written as they go, 2,000,000 orders each: `small-ids` `{"id":N}`,
 * `nested` each with an array 60 deep, `keys` each with a key of its own.
 */
async function startHostileUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const { createServer } = await import("node:http");
  const { gzipSync } = await import("node:zlib");
  const longString = Buffer.alloc(14 * 1024 * 1024, 0x61);
  const wide = once(() => {
    const wideParts = ['[{"id":1'];
    for (let field = 0; field < 2_000_000; field++) wideParts.push(`,"f${field}":${field}`);
    return Buffer.from(`${wideParts.join("")}}]`);
  });
  // 600 MB of orders, compressed piece by piece: each piece a run of orders, joined into one array.
  const gzipped = once(() => {
    const piece = ordersList(6_000_000);
    const inner = piece.subarray(1, piece.length - 1);
    return gzipSync(
      Buffer.concat([
        Buffer.from("["),
        ...Array.from({ length: 100 }, (_, index) =>
          index === 0 ? inner : Buffer.concat([Buffer.from(","), inner]),
        ),
        Buffer.from("]"),
      ]),
    );
  });
  const bodies: Record<string, () => Buffer> = {
    orders: once(() => ordersList(25_000_000)),
    million: once(() => ordersList(1_000_000 * 110)),
    errors: once(() => ordersFullOfErrors(10_000_000)),
    errors25: once(() => ordersFullOfErrors(25_000_000)),
    wide,
  };
  const server = createServer((request, response) => {
    // The shape is the first segment of the path: the upstream of one case is http://…/SHAPE/v1.
    const shape = (request.url ?? "/").split("/")[1] ?? "orders";
    if (request.method !== "GET" || !/\/v1\/store\/orders$/.test(request.url ?? "")) {
      response.writeHead(404, { "content-type": "application/json" });
      response.end('{"code":404,"message":"not found"}');
      return;
    }
    const json = { "content-type": "application/json" };
    if (shape === "strings") {
      response.writeHead(200, json);
      void (async () => {
        response.write("[");
        for (let id = 1; id <= 4 && !response.destroyed; id++) {
          if (id > 1) response.write(",");
          response.write(`{"id":${id},"quantity":1,"shipDate":"`);
          if (!response.write(longString)) await new Promise((done) => response.once("drain", done));
          response.write('"}');
        }
        response.end("]");
      })();
      return;
    }
    const streamed = STREAMED_ORDERS[shape];
    if (streamed) {
      response.writeHead(200, json);
      streamOrders(response, streamed);
      return;
    }
    if (shape === "gzip") {
      response.writeHead(200, { ...json, "content-encoding": "gzip" });
      response.end(gzipped());
      return;
    }
    response.writeHead(200, json);
    response.end((bodies[shape] ?? (bodies.orders as () => Buffer))());
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const NESTING = `${"[".repeat(60)}${"]".repeat(60)}`;
/** The lists written as they go, by shape: an order of each id. */
const STREAMED_ORDERS: Record<string, (id: number) => string> = {
  "small-ids": (id) => `{"id":${id}}`,
  nested: (id) => `{"id":${id},"x":${NESTING}}`,
  keys: (id) => `{"id":${id},"k${id}":1}`,
};
const STREAMED_COUNT = 2_000_000;

/** 2,000,000 orders of `order`, written as fast as the reader takes them. */
function streamOrders(response: import("node:http").ServerResponse, order: (id: number) => string): void {
  let id = 0;
  const pump = () => {
    while (id < STREAMED_COUNT) {
      let text = "";
      for (let piece = 0; piece < 5000 && id < STREAMED_COUNT; piece++, id++)
        text += `${id === 0 ? "[" : ","}${order(id)}`;
      if (!response.write(text)) {
        response.once("drain", pump);
        return;
      }
    }
    response.end("]");
  };
  pump();
}

/** A checkout to measure: its sources under tsx, or with `built` its command as built in `dist/`. */
interface Checkout {
  name: string;
  dir: string;
  built?: boolean;
}

/** How to start a checkout's `petstore-conformance`: from its sources under tsx, or its built command. */
function conformanceCommand(checkout: string | Checkout): { loaders: string[]; entry: string } {
  const { dir, built } = typeof checkout === "string" ? { dir: checkout, built: false } : checkout;
  if (built) return { loaders: [], entry: join(dir, "dist/bin/petstore-conformance.js") };
  return { loaders: ["--import", "tsx"], entry: join(dir, "conformance/bin.ts") };
}

/**
 * `petstore-conformance proxy` of a checkout, from its sources or built, with `args`, up to its start-up
 * line; `probe`: with this checkout's event-loop delay probe loaded, and its JSON lines kept in `output()`.
 */
async function startProxy(
  checkout: string | Checkout,
  upstream: string,
  args: string[],
  probe = false,
  keepOutput = probe,
): Promise<Started> {
  const { loaders, entry } = conformanceCommand(checkout);
  const child = spawn(
    process.execPath,
    [
      ...loaders,
      ...(probe ? ["--import", join(ROOT, "scripts/loop-delay-probe.ts")] : []),
      entry,
      "proxy",
      "--upstream",
      upstream,
      "--port",
      "0",
      "--reporter",
      `json:${join(tempFolder("bench-attack-"), "report.json")}`,
      ...args,
    ],
    {
      cwd: typeof checkout === "string" ? checkout : checkout.dir,
      stdio: ["ignore", keepOutput ? "pipe" : "ignore", "pipe"],
    },
  );
  const { url, output } = await listening(child, "the proxy");
  return started(child, url, output, "SIGTERM");
}

/** GETs a list through `base` and reads it to its end, keeping nothing. */
function drain(base: string, path: string): Promise<number> {
  return new Promise((done) => {
    const sent = request(`${base}${path}`, { headers: { authorization: `Bearer ${KEY}` } }, (answer) => {
      let bytes = 0;
      answer.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      answer.on("end", () => done(bytes));
      answer.on("error", () => done(bytes));
    });
    sent.on("error", () => done(-1));
    sent.end();
  });
}

/** This checkout's bare forwarder (scripts/forwarding-floor-server.ts) to `upstream`. */
async function startForwardingFloor(upstream: string): Promise<Started> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(ROOT, "scripts/forwarding-floor-server.ts"), "--upstream", upstream],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  const { url, output } = await listening(child, "the forwarder");
  return started(child, url, output, "SIGTERM");
}

/** Waits for the proxy's JSON line of the list (its verdict), written after `from` in its output. */
async function listVerdict(proxy: Started, from: number): Promise<string> {
  for (;;) {
    const match = /"path":"[^"]*\/store\/orders","status":\d+,"durationMs":[\d.]+,"verdict":"([^"]+)"/.exec(
      proxy.output().slice(from),
    );
    if (match?.[1]) return match[1];
    await new Promise((done) => setTimeout(done, 5));
  }
}

// A small request beside the list: one order, asked again this long after each answer.
const SMALL_EVERY_MS = 5;

/**
 * One list of a million orders through `base`, and a small request every few ms beside it until `until`
 * (the list's last byte, or for the proxy its verdict too): the small requests' worst wait, in ms.
 */
function smallWaitBesideList(base: string, until: (list: Promise<number>) => Promise<void>): Promise<number> {
  const url = new URL(base);
  return worstWaitDuring(
    url,
    `${url.pathname.replace(/\/+$/, "")}/store/orders/1`,
    () => until(drain(base, "/store/orders")),
    SMALL_EVERY_MS,
  );
}

/**
 * A million-order list through the bare forwarder, then through the proxy of `checkout` (its event-loop
 * delay probe loaded), a small request every few ms beside each, `runs` times over the same mock: each
 * run's worst waits through both, and the proxy's worst event-loop delay while the list arrives and from
 * its last byte to its verdict.
 */
async function millionListBesideSmallRequests(checkout: string, runs: number): Promise<string[]> {
  const mock = await startMock(checkout, ["--generate", "1000000"]);
  const floor = await startForwardingFloor(mock.url);
  const proxy = await startProxy(checkout, mock.url, [], true);
  const rows: string[] = [];
  try {
    // Once through each, not counted: the mock's list, the forwarder's and the proxy's code warm up.
    await drain(floor.url, "/store/orders");
    await drain(proxy.url, "/store/orders");
    await listVerdict(proxy, 0);
    for (let run = 1; run <= runs; run++) {
      const floorWait = await smallWaitBesideList(floor.url, async (list) => {
        await list;
      });
      await loopDelayMax(proxy);
      const from = proxy.output().length;
      let verdict = "";
      let listMs = 0;
      let verdictMs = 0;
      let delayArriving = 0;
      const listStarted = performance.now();
      const proxyWait = await smallWaitBesideList(proxy.url, async (list) => {
        await list;
        listMs = performance.now() - listStarted;
        delayArriving = await loopDelayMax(proxy);
        verdict = await listVerdict(proxy, from);
        verdictMs = performance.now() - listStarted;
      });
      const delayAfter = await loopDelayMax(proxy);
      rows.push(
        `| ${run} | ${floorWait} ms | ${proxyWait} ms | ${delayArriving} ms | ${delayAfter} ms | ${Math.round(listMs)} ms, verdict after ${Math.round(verdictMs)} ms (${verdict}) |`,
      );
    }
  } finally {
    await proxy.stop();
    await floor.stop();
    await mock.stop();
  }
  return rows;
}

/** The table of `millionListBesideSmallRequests`, for each checkout. */
export async function proxyListWait(
  checkouts: ReadonlyArray<{ name: string; dir: string }>,
  runs = 3,
): Promise<string[]> {
  const lines = [
    `### Small requests beside a million-order list, through the proxy and through a bare forwarder (every ${SMALL_EVERY_MS} ms)`,
  ];
  for (const { name, dir } of checkouts)
    lines.push(
      "",
      `**${name}**`,
      "",
      "| run | worst wait, bare forwarder (to the list's last byte) | worst wait, proxy (to its verdict) | proxy's worst event-loop delay, to the list's last byte | the same, from there to its verdict | the list through the proxy |",
      "|---|---|---|---|---|---|",
      ...(await millionListBesideSmallRequests(dir, runs)),
    );
  return lines;
}

/** Waits until the proxy wrote `count` verdicts of lists, or a minute went by. */
async function listVerdicts(proxy: Started, count: number): Promise<void> {
  const verdicts = () => proxy.output().match(/"path":"[^"]*\/store\/orders"[^\n]*"verdict":/g)?.length ?? 0;
  for (let waited = 0; verdicts() < count && waited < 60_000; waited += 20)
    await new Promise((done) => setTimeout(done, 20));
}

/**
 * The proxy's peak RSS with `lists` of `shape` at once, at `args`, read once their verdicts are in (the
 * judging can outlast the client's last byte); and whether it was alive after.
 */
async function proxyPeak(
  checkout: Checkout,
  upstream: string,
  shape: string,
  lists: number,
  args: string[],
): Promise<string> {
  const proxy = await startProxy(checkout, `${upstream}/${shape}/v1`, args, false, true);
  try {
    const idle = peakMegabytes(proxy.child.pid);
    const read = await Promise.all(Array.from({ length: lists }, () => drain(proxy.url, "/store/orders")));
    await listVerdicts(proxy, lists);
    const alive = proxy.child.exitCode === null && proxy.child.signalCode === null;
    const forwarded = Math.round(read.reduce((sum, bytes) => sum + bytes, 0) / 1e6);
    return `${peakMegabytes(proxy.child.pid)} MB (idle ${idle} MB; ${forwarded} MB forwarded)${alive ? "" : ", **died**"}`;
  } finally {
    await proxy.stop();
  }
}

/** The suite's peak RSS on a target whose lists are `shape`, at `args`. */
async function suitePeak(
  checkout: Checkout,
  upstream: string,
  shape: string,
  args: string[],
): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      ...conformanceCommand(checkout).loaders,
      conformanceCommand(checkout).entry,
      "--base-url",
      `${upstream}/${shape}/v1`,
      "--api-key",
      KEY,
      "--only",
      "list-orders,list-no-paging",
      "--reporter",
      `json:${join(tempFolder("bench-attack-"), "report.json")}`,
      ...args,
    ],
    { cwd: checkout.dir, stdio: ["ignore", "ignore", "ignore"] },
  );
  // The suite ends by itself: its peak is read just before, while the process is still there to read.
  let peak = 0;
  const watch = setInterval(() => {
    peak = Math.max(peak, peakMegabytes(child.pid) || 0);
  }, 10);
  await new Promise((done) => child.once("exit", done));
  clearInterval(watch);
  return `${peak} MB`;
}

/** The proxy's and the suite's cases under hostile lists, by name: what each runs and how it is called. */
function memoryCases(
  dir: Checkout,
  upstream: string,
): ReadonlyArray<{ name: string; title: string; run: () => Promise<string> }> {
  const small = ["--max-memory", "64MiB"];
  return [
    {
      name: "strings",
      title: "16 lists of 14 MiB strings at once, `--max-memory 64MiB`",
      run: () => proxyPeak(dir, upstream, "strings", 16, small),
    },
    {
      name: "orders",
      title: "16 lists of 25 MB at once, `--max-memory 64MiB`",
      run: () => proxyPeak(dir, upstream, "orders", 16, small),
    },
    {
      name: "orders-errors",
      title: "16 lists of 25 MB at once, `--max-memory 64MiB --errors`",
      run: () => proxyPeak(dir, upstream, "orders", 16, [...small, "--errors"]),
    },
    {
      name: "errors",
      title: "16 lists of 10 MB full of errors at once, `--max-memory 64MiB --errors`",
      run: () => proxyPeak(dir, upstream, "errors", 16, [...small, "--errors"]),
    },
    {
      name: "errors25",
      title: "16 lists of 25 MB full of errors at once, `--max-memory 64MiB --errors`",
      run: () => proxyPeak(dir, upstream, "errors25", 16, [...small, "--errors"]),
    },
    {
      name: "errors-default",
      title: "16 lists of 10 MB full of errors at once, default budget (256 MiB), `--errors`",
      run: () => proxyPeak(dir, upstream, "errors", 16, ["--errors"]),
    },
    {
      name: "orders-default",
      title: "16 lists of 25 MB at once, default budget (256 MiB)",
      run: () => proxyPeak(dir, upstream, "orders", 16, []),
    },
    {
      name: "orders-errors-default",
      title: "16 lists of 25 MB at once, default budget (256 MiB), `--errors`",
      run: () => proxyPeak(dir, upstream, "orders", 16, ["--errors"]),
    },
    {
      name: "wide",
      title: "one order with 2,000,000 fields, `--max-memory 64MiB`",
      run: () => proxyPeak(dir, upstream, "wide", 1, small),
    },
    {
      name: "gzip",
      title: "a 600 MB gzip list, default budget (256 MiB)",
      run: () => proxyPeak(dir, upstream, "gzip", 1, []),
    },
    {
      name: "million",
      title: "one 1,000,000-order list, default budget (256 MiB)",
      run: () => proxyPeak(dir, upstream, "million", 1, []),
    },
    {
      name: "small-ids",
      title: '16 lists of 2,000,000 `{"id":N}` at once, `--max-memory 64MiB`',
      run: () => proxyPeak(dir, upstream, "small-ids", 16, small),
    },
    {
      name: "nested",
      title: "16 lists of 2,000,000 orders each with an array 60 deep, `--max-memory 64MiB`",
      run: () => proxyPeak(dir, upstream, "nested", 16, small),
    },
    {
      name: "keys",
      title: "16 lists of 2,000,000 orders each with a key of its own, `--max-memory 64MiB`",
      run: () => proxyPeak(dir, upstream, "keys", 16, small),
    },
    {
      name: "nested-default",
      title: "16 lists of 2,000,000 orders each with an array 60 deep, default budget (256 MiB)",
      run: () => proxyPeak(dir, upstream, "nested", 16, []),
    },
    {
      name: "suite-strings",
      title: "the suite on lists of 14 MiB strings, `--max-memory 64MiB`",
      run: () => suitePeak(dir, upstream, "strings", small),
    },
    {
      name: "suite-errors",
      title: "the suite on lists of 10 MB full of errors, `--max-memory 64MiB`",
      run: () => suitePeak(dir, upstream, "errors", small),
    },
    {
      name: "suite-wide",
      title: "the suite on one order with 2,000,000 fields, `--max-memory 64MiB`",
      run: () => suitePeak(dir, upstream, "wide", small),
    },
  ];
}

/**
 * The proxy (and the suite) against hostile lists, at --max-memory 64MiB and at the default budget; only
 * the cases named in `only` when it is given.
 */
export async function proxyMemory(
  checkouts: ReadonlyArray<Checkout>,
  only?: ReadonlySet<string>,
): Promise<string[]> {
  const upstream = await startHostileUpstream();
  const lines = ["### The proxy's and the suite's memory under hostile lists (peak RSS, VmHWM)"];
  try {
    for (const checkout of checkouts) {
      lines.push("", `**${checkout.name}**`, "", "| Case | peak RSS |", "|---|---|");
      for (const row of memoryCases(checkout, upstream.url)) {
        if (only && !only.has(row.name)) continue;
        lines.push(`| ${row.title} | ${await row.run()} |`);
      }
    }
  } finally {
    await upstream.close();
  }
  return lines;
}

export async function underAttack(
  checkouts: ReadonlyArray<{ name: string; dir: string }>,
): Promise<string[]> {
  const lines = ["### Under attack, beside the same without it"];
  for (const { name, dir } of checkouts) {
    lines.push(
      "",
      `**${name}**`,
      "",
      "| The mock while… | peak RSS | an ordinary client's worst wait (list every 20 ms) | sessions made |",
      "|---|---|---|---|",
      await unauthenticatedFlood(dir, false),
      await unauthenticatedFlood(dir, true),
      "",
      "| A million-order world, control reads | peak RSS | `/__health` worst wait (every 20 ms) |",
      "|---|---|---|",
      await controlPlane(dir, false),
      await controlPlane(dir, true),
      "",
      "| A million-order world, a session's first list after… | worst event-loop delay | `/__health` worst wait (every 20 ms) |",
      "|---|---|---|",
      await sessionListAfterAdds(dir, 1),
      await sessionListAfterAdds(dir, 1_000),
      "",
      "| Under `ulimit -n 1024`, a new client's first answer with… | wait |",
      "|---|---|",
      await idleConnections(dir, 0),
      await idleConnections(dir, 1100),
      "",
      "| The judge on a list of ids colliding under a fixed hash | crafted | ordinary | ratio |",
      "|---|---|---|---|",
      collidingIds(dir),
    );
  }
  lines.push("", ...(await proxyListWait(checkouts)));
  return lines;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      baseline: { type: "string", multiple: true },
      "memory-only": { type: "boolean" },
      "redis-only": { type: "boolean" },
      "list-wait-only": { type: "boolean" },
      cases: { type: "string" },
      built: { type: "boolean" },
      "built-only": { type: "boolean" },
      "built-baseline": { type: "string", multiple: true },
    },
  });
  const only = values.cases === undefined ? undefined : new Set(values.cases.split(","));
  const checkouts = [
    ...(values.baseline ?? []).map((baseline) => ({
      name: `baseline (${baseline})`,
      dir: resolve(baseline),
    })),
    { name: "this checkout", dir: ROOT },
  ];
  const builtCheckouts: Checkout[] = [
    ...(values["built-baseline"] ?? []).map((baseline) => ({
      name: `baseline, built (${baseline})`,
      dir: resolve(baseline),
      built: true,
    })),
    ...(values.built || values["built-only"]
      ? [{ name: "this checkout, built (dist/)", dir: ROOT, built: true }]
      : []),
  ];
  const memoryCheckouts = values["built-only"] ? builtCheckouts : [...checkouts, ...builtCheckouts];
  const lines: string[] = [];
  if (values["list-wait-only"]) lines.push(...(await proxyListWait(checkouts)));
  else if (only) lines.push(...(await proxyMemory(memoryCheckouts, only)));
  else {
    if (!values["memory-only"] && !values["redis-only"]) lines.push(...(await underAttack(checkouts)));
    if (!values["memory-only"]) lines.push(...(await redisMode(checkouts)));
    if (!values["redis-only"]) lines.push(...(await proxyMemory(memoryCheckouts)));
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}
