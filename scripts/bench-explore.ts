import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, get } from "node:http";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { explore } from "../conformance/explore/explore.ts";
import { type ExploreDefect, startExploreTarget } from "../test-support/explore-target.ts";
import { startListeningProcess, startMockProcess } from "../test-support/spawn-mock.ts";

const SEEDS = [11, 12, 13, 14, 15];
const BUDGET_MS = 10_000;
const DEFECTS: readonly ExploreDefect[] = [
  "check-then-act",
  "replica-lag",
  "stale-list-cache",
  "number-id-cache",
  "shifted-pages",
];

/**
 * Explore against the local mock (memory): over several seeds, what it drove (operations a second, the
 * overlap achieved) and that it found nothing; then each planted defect of the test backend, how long the
 * search took to find it and how small the minimal history came out.
 */
export async function exploreCost(): Promise<string[]> {
  return ["## Explore", "", ...(await mockRows()), "", ...(await defectRows(DEFECTS, SEEDS))];
}

/**
 * Explore against the local mock (memory), per seed: operations a second, the CPU each process spent per
 * operation (they share the machine's cores), overlap per operation, and that it found nothing.
 */
async function mockRows(built?: string): Promise<string[]> {
  const rows = [
    "| Target | Seed | Operations/s | Explore's CPU per operation | The mock's | Histories | Overlapping pairs per operation | Lists over a cancel per operation | Load average | Found |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  const { explore, mock } = await exploreAndMock(built);
  const perOperation = (value: number, operations: number) => (value / operations).toFixed(2);
  try {
    for (const seed of SEEDS) {
      const cpuBefore = process.cpuUsage();
      const mockBefore = cpuOfProcess(mock.child.pid);
      const result = await explore({
        baseUrl: mock.url,
        apiKey: "dev-key-123",
        hooks: "mock-control",
        session: `bench-explore-${seed}`,
        seed,
        budgetMs: BUDGET_MS,
      });
      const cpu = process.cpuUsage(cpuBefore);
      const mockCpu = microsBetween(mockBefore, cpuOfProcess(mock.child.pid));
      const c = result.coverage;
      const perSecond = Math.round(c.operations / (result.durationMs / 1000));
      const cpuPerOperation = `${Math.round((cpu.user + cpu.system) / c.operations)} µs`;
      const mockPerOperation = mockCpu === undefined ? "" : `${Math.round(mockCpu / c.operations)} µs`;
      rows.push(
        `| mock (memory) | ${seed} | ${perSecond} | ${cpuPerOperation} | ${mockPerOperation} | ${c.histories} | ${perOperation(c.concurrentPairs, c.operations)} | ${perOperation(c.listsConcurrentWithCancels, c.operations)} | ${(loadavg()[0] ?? 0).toFixed(1)} | ${result.finding ? "a finding" : "nothing"} |`,
      );
    }
    rows.push("", ...(await floorRows(mock.url, `bench-explore-${SEEDS[0]}`)));
  } finally {
    await mock.stop();
  }
  return rows;
}

/**
 * This checkout's explore and mock, or those of the build in `built` (a checkout's folder, built with
 * tsup): run the mock rows from two checkouts in turn to compare them.
 */
async function exploreAndMock(
  built: string | undefined,
): Promise<{ explore: typeof explore; mock: Awaited<ReturnType<typeof startMockProcess>> }> {
  if (built === undefined) return { explore, mock: await startMockProcess(["--quiet"]) };
  const folder = resolve(built);
  const library = (await import(pathToFileURL(join(folder, "dist/lib/conformance.js")).href)) as {
    explore: typeof explore;
  };
  const mockScript = join(folder, "dist/mock/petstore-mock.cjs");
  return {
    explore: library.explore,
    mock: await startListeningProcess(mockScript, ["--port", "0", "--quiet"]),
  };
}

/** A process's CPU so far in clock ticks, from /proc (Linux); undefined elsewhere. */
function cpuOfProcess(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

// Clock ticks a second on Linux (USER_HZ).
const TICKS_PER_SECOND = 100;

function microsBetween(before: number | undefined, after: number | undefined): number | undefined {
  if (before === undefined || after === undefined) return undefined;
  return ((after - before) * 1_000_000) / TICKS_PER_SECOND;
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FLOOR_CONNECTIONS = 64;
const FLOOR_SECONDS = 5;

/**
 * What the same list of the same session costs without explore, as a floor for its operations a second on
 * this machine: requests a second of autocannon and of a bare node:http client loop, 64 at once.
 */
async function floorRows(baseUrl: string, session: string): Promise<string[]> {
  const url = `${baseUrl}/store/orders`;
  const headers = { authorization: "Bearer dev-key-123", "x-mock-session": session };
  const cannon = JSON.parse(
    execFileSync(
      join(ROOT, "tools/node_modules/.bin/autocannon"),
      [
        "-j",
        "-c",
        String(FLOOR_CONNECTIONS),
        "-d",
        String(FLOOR_SECONDS),
        ...Object.entries(headers).flatMap(([name, value]) => ["-H", `${name}=${value}`]),
        url,
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
    ),
  ) as { requests: { average: number } };
  return [
    "| The session's list without explore, 64 at once | Requests/s |",
    "|---|---|",
    `| autocannon (its own process) | ${Math.round(cannon.requests.average)} |`,
    `| a bare node:http client loop (in this process) | ${await bareClientRate(url, headers)} |`,
    `| a bare undici client loop (in this process) | ${await bareUndiciRate(url, headers)} |`,
  ];
}

/** The same loop on undici's pool, the client explore uses against a plain-HTTP target. */
async function bareUndiciRate(url: string, headers: Record<string, string>): Promise<number> {
  const { Pool } = await import("undici");
  const target = new URL(url);
  const pool = new Pool(target.origin);
  const until = performance.now() + FLOOR_SECONDS * 1000;
  let done = 0;
  const loop = async () => {
    while (performance.now() < until) {
      const { body } = await pool.request({ path: target.pathname, method: "GET", headers });
      await body.dump();
      done++;
    }
  };
  await Promise.all(Array.from({ length: FLOOR_CONNECTIONS }, loop));
  await pool.destroy();
  return Math.round(done / FLOOR_SECONDS);
}

/** GETs of `url` back to back on 64 kept-alive connections for a few seconds: completed a second. */
async function bareClientRate(url: string, headers: Record<string, string>): Promise<number> {
  const agent = new Agent({ keepAlive: true });
  const until = performance.now() + FLOOR_SECONDS * 1000;
  let done = 0;
  const once = () =>
    new Promise<void>((resolve, reject) =>
      get(url, { agent, headers }, (response) => {
        response.resume();
        response.on("end", resolve);
      }).on("error", reject),
    );
  const loop = async () => {
    while (performance.now() < until) {
      await once();
      done++;
    }
  };
  await Promise.all(Array.from({ length: FLOOR_CONNECTIONS }, loop));
  agent.destroy();
  return Math.round(done / FLOOR_SECONDS);
}

/** Each planted defect of the test backend: how long finding and shrinking took, how small and how often it failed again. */
async function defectRows(defects: readonly ExploreDefect[], seeds: readonly number[]): Promise<string[]> {
  const rows = [
    "| Planted defect | Seed | Search and shrink | Minimal operations | Replays failed |",
    "|---|---|---|---|---|",
  ];
  for (const defect of defects) {
    for (const seed of seeds) rows.push(await defectRow(defect, seed));
  }
  return rows;
}

async function defectRow(defect: ExploreDefect, seed: number): Promise<string> {
  const target = await startExploreTarget({
    defect,
    removeCancelled: defect !== "check-then-act" && defect !== "number-id-cache",
  });
  try {
    const started = performance.now();
    const result = await explore({
      baseUrl: target.url,
      apiKey: target.key,
      hooks: {
        provision: (_context, wanted) =>
          target.create(Math.min(wanted.pending, 4), Math.min(wanted.shipped, 2)),
      },
      seed,
      budgetMs: 30_000,
    });
    const finding = result.finding;
    return finding
      ? `| ${defect} | ${seed} | ${(result.durationMs / 1000).toFixed(1)} s in all | ${finding.minimal.history.operations.length} | ${finding.reproduced.failed} of ${finding.reproduced.of} |`
      : `| ${defect} | ${seed} | not found in ${((performance.now() - started) / 1000).toFixed(1)} s | | |`;
  } finally {
    await target.close();
  }
}

// `node --import tsx scripts/bench-explore.ts mock replica-lag`: the rows of those only; `mock --built DIR`:
// the mock rows of DIR's build (its explore against its mock).
if (import.meta.url === `file://${process.argv[1]}`) {
  const chosen = process.argv.slice(2);
  const defects = chosen.filter((name): name is ExploreDefect => DEFECTS.includes(name as ExploreDefect));
  const built = chosen.includes("--built") ? chosen[chosen.indexOf("--built") + 1] : undefined;
  if (chosen.includes("mock")) console.log((await mockRows(built)).join("\n"));
  if (defects.length > 0) console.log((await defectRows(defects, SEEDS)).join("\n"));
}
