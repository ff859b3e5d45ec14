import type fc from "fast-check";
import type { History } from "../model/history.ts";
import { checkHistory, commonChoices, type HistoryVerdict } from "../model/linearizability.ts";
import { ALL_RUN_CHOICES, type RunChoices } from "../model/spec-model.ts";
import { type Driver, playProgram } from "./driver.ts";
import type { OrderSupply } from "./orders.ts";
import {
  nthProgram,
  type Program,
  type ProgramShape,
  programArbitrary,
  slotsUsed,
  smallerPrograms,
  stepCount,
  withoutOneStep,
} from "./program.ts";

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
}

/** A program as it was played once: its history and the checker's verdict on it. */
export interface PlayedHistory {
  program: Program;
  history: History;
  verdict: HistoryVerdict;
}

/** What a search did, so that a pass is not read as more than it was. */
export interface ExploreCoverage {
  histories: number;
  operations: number;
  /** Pending orders used (each in one history). */
  orders: number;
  /** Most clients of one history. */
  clients: number;
  /** Pairs of operations on one order that overlapped in time. */
  concurrentPairs: number;
  /** Lists that overlapped a cancel of one of the run's orders. */
  listsConcurrentWithCancels: number;
}

export interface ShrunkFinding {
  /** The history the search first failed on. */
  original: PlayedHistory;
  /** The smallest program that still failed, as it failed. */
  minimal: PlayedHistory;
  /** The minimal program played again at the end: how often it failed. */
  reproduced: { failed: number; of: number };
  /** Smaller programs tried while shrinking. */
  candidatesTried: number;
  /** Why shrinking ended: no smaller program failed (1-minimal), or its budget or the orders ran out first. */
  shrinkEnded: "minimal" | "budget" | "orders";
}

export interface SearchResult {
  seed: number;
  /** Why the search ended. */
  ended: "budget" | "orders" | "finding";
  coverage: ExploreCoverage;
  largestStaleMs: number;
  finding?: ShrunkFinding;
}

/** Runs programs of the seed until one fails (then shrinks it), the budget is spent or the orders run out. */
export async function search(
  driver: Driver,
  supply: OrderSupply,
  settings: SearchSettings,
): Promise<SearchResult> {
  const arbitrary = programArbitrary(settings.shape);
  const coverage: ExploreCoverage = {
    histories: 0,
    operations: 0,
    orders: 0,
    clients: 0,
    concurrentPairs: 0,
    listsConcurrentWithCancels: 0,
  };
  const player = new Player(driver, supply, settings, coverage);
  const deadline = performance.now() + settings.budgetMs;
  let largestStaleMs = 0;
  for (let n = 0; performance.now() < deadline; n++) {
    const played = await player.play(nthProgram(arbitrary, settings.seed, n));
    if (played === undefined) return { seed: settings.seed, ended: "orders", coverage, largestStaleMs };
    largestStaleMs = Math.max(largestStaleMs, played.verdict.largestStaleMs);
    if (!played.verdict.ok) {
      const finding = await shrink(player, arbitrary, played, settings);
      return { seed: settings.seed, ended: "finding", coverage, largestStaleMs, finding };
    }
  }
  return { seed: settings.seed, ended: "budget", coverage, largestStaleMs };
}

/**
 * Plays programs on fresh orders and counts what they covered. The run's open choices are decided once:
 * each passing history narrows them to those it allows, and every later history is judged under what is
 * left, so a stale read counts even in a history that does not itself show whether cancelled orders stay.
 */
class Player {
  #choices: readonly RunChoices[] = ALL_RUN_CHOICES;

  constructor(
    private readonly driver: Driver,
    private readonly supply: OrderSupply,
    private readonly settings: SearchSettings,
    private readonly coverage: ExploreCoverage,
  ) {}

  /** One run of a program on orders no earlier run cancelled; undefined when the orders are used up. */
  async play(program: Program): Promise<PlayedHistory | undefined> {
    const kinds = this.settings.shape.slots.kinds;
    const used = slotsUsed(program);
    const pendingSlots = used.filter((slot) => kinds[slot] === "pending");
    const shippedSlots = used.filter((slot) => kinds[slot] === "shipped");
    const pending = await this.supply.pending(pendingSlots.length);
    if (pending === undefined) return undefined;
    const shipped = await this.supply.shipped(shippedSlots.length);
    const ids: (string | undefined)[] = kinds.map(() => undefined);
    pendingSlots.forEach((slot, at) => {
      ids[slot] = pending[at];
    });
    shippedSlots.forEach((slot, at) => {
      ids[slot] = shipped[at];
    });
    const missingSlot = kinds.indexOf("missing");
    if (missingSlot !== -1) ids[missingSlot] = this.supply.missing[0];
    const history = await playProgram(this.driver, program, { kinds, ids });
    const verdict = checkHistory(history, {
      allowStaleMs: this.settings.allowStaleMs,
      choices: this.#choices,
    });
    if (verdict.ok) this.#choices = commonChoices(this.#choices, verdict.choices);
    this.#count(program, history, verdict, pending.length);
    return { program, history, verdict };
  }

  #count(program: Program, history: History, verdict: HistoryVerdict, orders: number): void {
    const coverage = this.coverage;
    coverage.histories++;
    coverage.operations += history.operations.length;
    coverage.orders += orders;
    coverage.clients = Math.max(coverage.clients, program.length);
    coverage.concurrentPairs += verdict.coverage.concurrentPairs;
    coverage.listsConcurrentWithCancels += verdict.coverage.listsConcurrentWithCancels;
  }

  /** Up to `times` runs, stopping at the first that fails; undefined when the orders ran out first. */
  async firstFailure(program: Program, times: number): Promise<PlayedHistory | "passed" | undefined> {
    for (let run = 0; run < times; run++) {
      const played = await this.play(program);
      if (played === undefined) return undefined;
      if (!played.verdict.ok) return played;
    }
    return "passed";
  }
}

/**
 * Smaller programs, fast-check's candidates and the program less one step, each played several times on
 * fresh orders; the first that still fails is kept and shrunk in turn, until none does: removing any one
 * step then let every try pass. Then the minimal program is played again to say how often it fails.
 */
async function shrink(
  player: Player,
  arbitrary: fc.Arbitrary<Program>,
  original: PlayedHistory,
  settings: SearchSettings,
): Promise<ShrunkFinding> {
  const deadline = performance.now() + settings.shrinkBudgetMs;
  let minimal = original;
  let candidatesTried = 0;
  let shrinkEnded: ShrunkFinding["shrinkEnded"] = "minimal";
  const tried = new Set<string>();
  shrinking: for (;;) {
    for (const candidate of candidatesOf(arbitrary, minimal.program)) {
      const key = JSON.stringify(candidate);
      if (tried.has(key) || stepCount(candidate) === 0) continue;
      tried.add(key);
      if (performance.now() >= deadline) {
        shrinkEnded = "budget";
        break shrinking;
      }
      candidatesTried++;
      const outcome = await player.firstFailure(candidate, settings.replays);
      if (outcome === undefined) {
        shrinkEnded = "orders";
        break shrinking;
      }
      if (outcome !== "passed") {
        minimal = outcome;
        continue shrinking;
      }
    }
    break;
  }
  const reproduced = await replay(player, minimal.program, settings.finalReplays);
  return { original, minimal, reproduced, candidatesTried, shrinkEnded };
}

function* candidatesOf(arbitrary: fc.Arbitrary<Program>, program: Program): Iterable<Program> {
  yield* smallerPrograms(arbitrary, program);
  yield* withoutOneStep(program);
}

/** The minimal program played `times` times more, on fresh orders: how many of those runs failed. */
async function replay(
  player: Player,
  program: Program,
  times: number,
): Promise<{ failed: number; of: number }> {
  let failed = 0;
  let of = 0;
  for (; of < times; of++) {
    const played = await player.play(program);
    if (played === undefined) break;
    if (!played.verdict.ok) failed++;
  }
  return { failed, of };
}
