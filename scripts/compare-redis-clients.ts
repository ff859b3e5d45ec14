import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { tempFolder } from "../common/temp-folder.ts";
import { startRedis } from "../test-support/services.ts";
import { median } from "./median.ts";

// The mock's Redis client chosen on evidence: ioredis (the one it uses) beside node-redis, the client
// Redis Ltd. now recommends for new projects, both sending what the mock sends most (a Lua script by its
// SHA with a key and an argument) to one redis-server on loopback, many in flight as under load. node-redis
// is installed into a temporary folder for the run, so the project does not depend on it.
//
//   npx tsx scripts/compare-redis-clients.ts [--calls N] [--in-flight N] [--rounds N]

const NODE_REDIS = "redis@6.3.1";
const SCRIPT = "redis.call('HINCRBY', KEYS[1], ARGV[1], 1) return redis.call('HGET', KEYS[1], ARGV[1])";

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

type Call = (key: string, field: string) => Promise<unknown>;

/** `calls` script calls, `inFlight` at a time: the elapsed ms. */
async function timeCalls(call: Call, calls: number, inFlight: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      const index = next++;
      await call(`w:${index % 64}`, `o:${index % 1000}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return performance.now() - started;
}

async function main(): Promise<void> {
  const calls = flag("calls", 50_000);
  const inFlight = flag("in-flight", 64);
  const rounds = flag("rounds", 5);
  const folder = tempFolder("redis-clients-");
  execFileSync("npm", ["install", "--prefix", folder, "--no-audit", "--no-fund", "--silent", NODE_REDIS]);
  const nodeRedis = (await import(pathToFileURL(join(folder, "node_modules/redis/dist/index.js")).href)) as {
    createClient: (options: { url: string }) => {
      connect(): Promise<unknown>;
      scriptLoad(script: string): Promise<string>;
      evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
      quit(): Promise<unknown>;
    };
  };
  const redis = await startRedis();
  try {
    const io = new Redis(redis.url);
    const modern = nodeRedis.createClient({ url: redis.url });
    await modern.connect();
    const sha = await modern.scriptLoad(SCRIPT);
    const contenders: Array<[string, Call]> = [
      ["ioredis 6.0.0", (key, field) => io.evalsha(sha, 1, key, field)],
      [
        `node-redis ${NODE_REDIS.split("@")[1]}`,
        (key, field) => modern.evalSha(sha, { keys: [key], arguments: [field] }),
      ],
    ];
    for (const [, call] of contenders) await timeCalls(call, 2_000, inFlight);
    const times = contenders.map(() => [] as number[]);
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const measured: number[] = [];
      // In turn, never together (each has the server and the event loop to itself), the first one
      // alternating between rounds.
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const index of order) {
        const call = contenders[index]?.[1] as Call;
        measured[index] = await timeCalls(call, calls, inFlight);
      }
      for (const [index, ms] of measured.entries()) times[index]?.push(ms);
      ratios.push((measured[0] as number) / (measured[1] as number));
    }
    console.log(`${calls} EVALSHA calls, ${inFlight} in flight, median of ${rounds} rounds in turn:`);
    for (const [index, [name]] of contenders.entries()) {
      const ms = median(times[index] as number[]);
      console.log(`  ${name}: ${ms.toFixed(0)} ms (${Math.round((calls / ms) * 1000)} calls/s)`);
    }
    console.log(`  ioredis / node-redis time, round by round: ${median(ratios).toFixed(2)}x`);
    io.disconnect();
    await modern.quit();
  } finally {
    await redis.stop();
  }
}

await main();
