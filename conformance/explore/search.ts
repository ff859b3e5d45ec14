import type fc from "fast-check";
import { HookError } from "../target/hooks.ts";
import type { Driver } from "./driver.ts";
import type { OrderSupply } from "./orders.ts";
import { type ExploreCoverage, outOf, type PlayedHistory, Player } from "./player.ts";
import { nthProgram, type Program, type ProgramShape, programArbitrary } from "./program.ts";
import { type ShrunkFinding, shrink } from "./shrink.ts";

export interface SearchSettings {
  seed: number;
  shape: ProgramShape;
  /** How long the search for a failing history runs. */
  budgetMs: number;
  /** How long shrinking a failing program may take, after the search. */
  shrinkBudgetMs: number;
  /** Runs of each smaller candidate, on fresh orders, while none fails. */
  replays: number;
  /** Runs of the minimal program at the end, for "failed k of n replays". */
  finalReplays: number;
  allowStaleMs: number;
  /** Histories played at once, each on orders of its own. */
  parallel: number;
  /** Aborted by a stop signal: no history starts after it, and the search ends with what it covered. */
  stop?: AbortSignal | undefined;
  /** How long a final replay, which has no budget of its own, waits for the provision hook's orders. */
  hookGraceMs: number;
  /** How long past the budget an answer the search awaits is waited for (default: hookGraceMs). */
  answerGraceMs?: number;
}

export interface SearchResult {
  seed: number;
  /** Why the search ended. */
  ended: "budget" | "orders" | "finding" | "interrupted";
  coverage: ExploreCoverage;
  largestStaleMs: number;
  finding?: ShrunkFinding;
  /** The hook error that cut short the search, shrinking or the replays of a finding, which stands. */
  hookFailure?: string;
}

/** What a search has covered before it plays anything. */
export function noCoverage(): ExploreCoverage {
  return {
    histories: 0,
    operations: 0,
    orders: 0,
    clients: 0,
    concurrentPairs: 0,
    listsConcurrentWithCancels: 0,
    lists: 0,
    listsReadWhole: 0,
    cancels: 0,
    cancelsDecided: 0,
    keyRefused: 0,
  };
}

/** Runs programs of the seed until one fails (then shrinks it), the budget is spent or the orders run out. */
export async function search(
  driver: Driver,
  supply: OrderSupply,
  settings: SearchSettings,
): Promise<SearchResult> {
  const arbitrary = programArbitrary(settings.shape);
  const coverage = noCoverage();
  const player = new Player(driver, supply, settings, coverage);
  // An answer still awaited past the budget and its grace (a 429 whose Retry-After is far off) is given
  // up on, as none: the budget bounds the search, not the target's waits.
  const grace = settings.answerGraceMs ?? settings.hookGraceMs;
  const callOff = driver.inFlight.giveUpAfter(settings.budgetMs + grace);
  const found = await firstFailing(player, arbitrary, settings).finally(callOff);
  const largestStaleMs = player.largestStaleMs;
  if (found === "budget" || found === "orders" || found === "interrupted")
    return { seed: settings.seed, ended: found, coverage, largestStaleMs };
  const { finding, hookFailure } = await shrink(player, arbitrary, found, settings);
  return {
    seed: settings.seed,
    ended: "finding",
    coverage,
    largestStaleMs,
    finding,
    ...(hookFailure !== undefined ? { hookFailure } : {}),
  };
}

/**
 * The seed's programs in turn, `parallel` of them played at once, until one fails, the budget is spent or
 * the orders run out; of the failures found together, the one of the earliest program. An error stops
 * every history and is thrown once they are all over, unless a failure was found: a hook's error then
 * leaves it to `shrink`, which ends at once and reports it.
 */
async function firstFailing(
  player: Player,
  arbitrary: fc.Arbitrary<Program>,
  settings: SearchSettings,
): Promise<PlayedHistory | "budget" | "orders" | "interrupted"> {
  const deadline = performance.now() + settings.budgetMs;
  let next = 0;
  let ended: "budget" | "orders" | "interrupted" | undefined;
  const failures: { n: number; played: PlayedHistory }[] = [];
  const worker = async () => {
    while (ended === undefined && failures.length === 0 && !player.halted) {
      if (settings.stop?.aborted) ended = "interrupted";
      else if (performance.now() >= deadline) ended = "budget";
      else {
        const n = next++;
        const played = await player.play(nthProgram(arbitrary, settings.seed, n), deadline);
        if (played === undefined) ended = settings.stop?.aborted ? "interrupted" : outOf(deadline);
        else if (!played.verdict.ok) failures.push({ n, played });
      }
    }
  };
  await Promise.allSettled(Array.from({ length: Math.max(1, settings.parallel) }, worker));
  const earliest = failures.sort((a, b) => a.n - b.n)[0];
  if (earliest === undefined || !(player.failure instanceof HookError)) player.throwFailure();
  return earliest?.played ?? ended ?? "budget";
}
