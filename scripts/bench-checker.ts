import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { History, HistoryOperation } from "../conformance/model/history.ts";
import { checkHistory } from "../conformance/model/linearizability.ts";
import {
  cancelAnswer,
  listShows,
  type OrderStatus,
  type RunChoices,
} from "../conformance/model/spec-model.ts";
import { median } from "./median.ts";

/**
 * What the linearizability checker costs on a long history: one a deployment that follows the model
 * gives (so every order is judged in full and nothing stops the search early), of OPERATIONS operations
 * by CLIENTS clients over ORDERS orders, a tenth of them lists. Measured in a process of its own, so that
 * its peak RSS is the history's and the checker's alone. `npx tsx scripts/bench-checker.ts` prints the
 * section; `npm run bench -- --sections checker` puts it in BENCHMARKS.md.
 */

const OPERATIONS = 100_000;
const CLIENTS = 16;
const ORDERS = 200;
const LIST_SHARE = 0.1;
const ROUNDS = 5;
const CHOICES: RunChoices = { cancelledOrdersListed: false, secondCancelStatus: 409 };

interface Measured {
  medianMs: number;
  /** CPU time (user and system) of a check: what the machine's other load changes least. */
  medianCpuMs: number;
  peakRssMiB: number;
  /** RSS before the history was made: Node and the TypeScript loader. */
  startRssMiB: number;
  historyHeapMiB: number;
  ok: boolean;
  concurrentPairs: number;
  listsConcurrentWithCancels: number;
}

/** A deterministic generator (mulberry32), so every run measures the same history. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

interface Planned {
  operation: HistoryOperation;
  /** Where the deployment applied it, within its span. */
  at: number;
}

function plan(random: () => number, ids: readonly string[]): Planned[] {
  const planned: Planned[] = [];
  const clock = new Array<number>(CLIENTS).fill(0);
  for (let index = 0; index < OPERATIONS; index++) {
    const client = index % CLIENTS;
    const sentAt = (clock[client] as number) + random() * 2;
    const answeredAt = sentAt + 1 + random() * 19;
    clock[client] = answeredAt;
    const at = sentAt + random() * (answeredAt - sentAt);
    const operation: HistoryOperation =
      random() < LIST_SHARE
        ? { op: "list", client, sentAt, answeredAt, status: 200, shown: null }
        : {
            op: "cancel",
            client,
            sentAt,
            answeredAt,
            status: null,
            orderId: ids[Math.floor(random() * ids.length)] as string,
          };
    planned.push({ operation, at });
  }
  return planned.sort((a, b) => a.at - b.at);
}

/** The history: each operation answered as the model answers it at its instant. */
export function generateHistory(seed = 1): History {
  const random = seeded(seed);
  const ids = Array.from({ length: ORDERS }, (_, index) => String(9007199254740993n + BigInt(index * 2)));
  const status = new Map<string, OrderStatus>(
    ids.map((id, index) => [id, index % 4 === 0 ? "shipped" : "pending"]),
  );
  const byInstant = plan(random, ids);
  for (const { operation } of byInstant) {
    if (operation.op === "cancel") {
      const before = status.get(operation.orderId) as OrderStatus;
      operation.status = cancelAnswer(before, CHOICES);
      if (before === "pending") status.set(operation.orderId, "cancelled");
    } else {
      const shown = new Map<string, number>();
      for (const [index, id] of ids.entries())
        if (listShows(status.get(id) as OrderStatus, CHOICES)) shown.set(id, index);
      operation.shown = shown;
    }
  }
  return {
    given: {
      pending: ids.filter((id) => status.get(id) !== "shipped"),
      shipped: ids.filter((id) => status.get(id) === "shipped"),
      missing: [],
      unknown: [],
    },
    records: ids.map((id) => `{"id":${id},"petId":1,"quantity":1,"complete":false}`),
    operations: byInstant.map(({ operation }) => operation).sort((a, b) => a.sentAt - b.sentAt),
  };
}

function measure(): Measured {
  const startRssMiB = process.memoryUsage().rss / 2 ** 20;
  const heapBefore = process.memoryUsage().heapUsed;
  const history = generateHistory();
  const historyHeapMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  const times: number[] = [];
  const cpuTimes: number[] = [];
  let verdict = checkHistory(history);
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    verdict = checkHistory(history);
    const cpu = process.cpuUsage(cpuBefore);
    times.push(performance.now() - started);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
  }
  return {
    medianMs: median(times),
    medianCpuMs: median(cpuTimes),
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    startRssMiB,
    historyHeapMiB,
    ok: verdict.ok,
    concurrentPairs: verdict.coverage.concurrentPairs,
    listsConcurrentWithCancels: verdict.coverage.listsConcurrentWithCancels,
  };
}

/** The bench's section: the measurement run in a child process, as Markdown lines. */
export function checkerCost(): string[] {
  const output = execFileSync(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), "--measure"],
    {
      encoding: "utf8",
    },
  );
  const measured = JSON.parse(output) as Measured;
  if (!measured.ok) throw new Error("the checker found a finding in a history the model gave");
  return [
    "### The linearizability checker",
    "",
    `A history of ${OPERATIONS.toLocaleString("en")} operations (${LIST_SHARE * 100}% lists) by ${CLIENTS} clients over ${ORDERS} orders, as a deployment that follows the model answers them (\`scripts/bench-checker.ts\`; ${measured.concurrentPairs.toLocaleString("en")} pairs of concurrent operations on one order, ${measured.listsConcurrentWithCancels.toLocaleString("en")} lists concurrent with cancels), judged whole by \`checkHistory\`:`,
    "",
    "| Median of 5 checks (wall) | Its CPU time | Peak RSS of the process | RSS before the history was made | Heap the history holds |",
    "| --- | --- | --- | --- | --- |",
    `| ${measured.medianMs.toFixed(0)} ms | ${measured.medianCpuMs.toFixed(0)} ms | ${measured.peakRssMiB.toFixed(0)} MiB | ${measured.startRssMiB.toFixed(0)} MiB | ${measured.historyHeapMiB.toFixed(0)} MiB |`,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--measure")) process.stdout.write(JSON.stringify(measure()));
  else process.stdout.write(`${checkerCost().join("\n")}\n`);
}
