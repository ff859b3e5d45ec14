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
  /** Histories played at once, each on orders of its own. */
  parallel: number;
  /** Aborted by a stop signal: no history starts after it, and the search ends with what it covered. */
  stop?: AbortSignal | undefined;
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
  /**
   * The run's choices the minimal history was judged under, and the histories that ruled out the others:
   * with them, the minimal history is a counterexample even when it does not show the choice itself.
   */
  choices: readonly RunChoices[];
  ruledOut: readonly ChoiceRuledOut[];
  /** Why shrinking ended: no smaller program failed (1-minimal), or its budget or the orders ran out first. */
  shrinkEnded: "minimal" | "budget" | "orders" | "interrupted";
}

export interface SearchResult {
  seed: number;
  /** Why the search ended. */
  ended: "budget" | "orders" | "finding" | "interrupted";
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
  const found = await firstFailing(player, arbitrary, settings);
  const largestStaleMs = player.largestStaleMs;
  if (found === "budget" || found === "orders" || found === "interrupted")
    return { seed: settings.seed, ended: found, coverage, largestStaleMs };
  const finding = await shrink(player, arbitrary, found, settings);
  return { seed: settings.seed, ended: "finding", coverage, largestStaleMs, finding };
}

/**
 * The seed's programs in turn, `parallel` of them played at once, until one fails, the budget is spent or
 * the orders run out; of the failures found together, the one of the earliest program.
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
    while (ended === undefined && failures.length === 0) {
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
  await Promise.all(Array.from({ length: Math.max(1, settings.parallel) }, worker));
  const earliest = failures.sort((a, b) => a.n - b.n)[0];
  return earliest?.played ?? ended ?? "budget";
}

/** Why orders stopped coming: the time was up while provisioning, or there were no more. */
function outOf(deadline: number): "budget" | "orders" {
  return performance.now() >= deadline ? "budget" : "orders";
}

/** A combination of the run's open choices that a history of the run cannot be explained under, at any staleness. */
export interface ChoiceRuledOut {
  choices: RunChoices;
  history: History;
}

/**
 * Plays programs on fresh orders and counts what they covered. The run's open choices are decided once:
 * each history narrows them to those that explain it at any staleness, and every later history is judged
 * under what is left, so a stale read counts even in a history that does not itself show whether
 * cancelled orders stay.
 */
class Player {
  #choices: readonly RunChoices[] = ALL_RUN_CHOICES;
  readonly #ruledOut: ChoiceRuledOut[] = [];
  /** The largest staleness a list of the search needed. */
  largestStaleMs = 0;

  constructor(
    private readonly driver: Driver,
    private readonly supply: OrderSupply,
    private readonly settings: SearchSettings,
    private readonly coverage: ExploreCoverage,
  ) {}

  /**
   * One run of a program on orders no earlier run cancelled, starting no step past `until`; undefined
   * when the orders are used up, or `until` passed while more were being provisioned.
   */
  async play(program: Program, until?: number): Promise<PlayedHistory | undefined> {
    const kinds = this.settings.shape.slots.kinds;
    const used = slotsUsed(program);
    const pendingSlots = used.filter((slot) => kinds[slot] === "pending");
    const shippedSlots = used.filter((slot) => kinds[slot] === "shipped");
    const pending = await this.supply.pending(pendingSlots.length, until);
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
    const history = await playProgram(this.driver, program, { kinds, ids }, until);
    await this.supply.release([...pending, ...shipped]);
    const verdict = checkHistory(history, {
      allowStaleMs: this.settings.allowStaleMs,
      choices: this.#choices,
    });
    this.#narrowChoices(history, verdict);
    this.largestStaleMs = Math.max(this.largestStaleMs, verdict.largestStaleMs);
    this.#count(program, history, verdict, pending.length);
    return { program, history, verdict };
  }

  /** The run's choices still possible, and for each one ruled out, the history that ruled it out. */
  get choices(): { possible: readonly RunChoices[]; ruledOut: readonly ChoiceRuledOut[] } {
    return { possible: this.#choices, ruledOut: this.#ruledOut };
  }

  #narrowChoices(history: History, verdict: HistoryVerdict): void {
    const narrowed = commonChoices(this.#choices, verdict.consistentChoices);
    for (const choices of this.#choices)
      if (!narrowed.includes(choices)) this.#ruledOut.push({ choices, history });
    this.#choices = narrowed;
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

  /**
   * Up to `times` runs, `parallel` at once, stopping at the first round with a failure; undefined when the
   * orders ran out first.
   */
  async firstFailure(
    program: Program,
    times: number,
    until: number,
  ): Promise<PlayedHistory | "passed" | undefined> {
    for (let run = 0; run < times; run += this.settings.parallel) {
      const round = await this.playMany(program, Math.min(this.settings.parallel, times - run), until);
      const failed = round.find((played) => played !== undefined && !played.verdict.ok);
      if (failed !== undefined) return failed;
      if (round.includes(undefined)) return undefined;
    }
    return "passed";
  }

  /** The program played `times` times at once, each run on orders of its own. */
  playMany(program: Program, times: number, until?: number): Promise<(PlayedHistory | undefined)[]> {
    return Promise.all(Array.from({ length: times }, () => this.play(program, until)));
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
      if (settings.stop?.aborted || performance.now() >= deadline) {
        shrinkEnded = settings.stop?.aborted ? "interrupted" : "budget";
        break shrinking;
      }
      candidatesTried++;
      const outcome = await player.firstFailure(candidate, settings.replays, deadline);
      if (outcome === undefined) {
        shrinkEnded = settings.stop?.aborted ? "interrupted" : outOf(deadline);
        break shrinking;
      }
      if (outcome !== "passed") {
        minimal = outcome;
        continue shrinking;
      }
    }
    break;
  }
  const reproduced = await replay(player, minimal.program, settings);
  const { possible, ruledOut } = player.choices;
  return { original, minimal, reproduced, candidatesTried, shrinkEnded, choices: possible, ruledOut };
}

function* candidatesOf(arbitrary: fc.Arbitrary<Program>, program: Program): Iterable<Program> {
  yield* smallerPrograms(arbitrary, program);
  yield* withoutOneStep(program);
}

/** The minimal program played `times` times more, on fresh orders: how many of those runs failed. */
async function replay(
  player: Player,
  program: Program,
  settings: SearchSettings,
): Promise<{ failed: number; of: number }> {
  const times = settings.finalReplays;
  let failed = 0;
  let of = 0;
  while (of < times && !settings.stop?.aborted) {
    const round = await player.playMany(program, Math.min(settings.parallel, times - of));
    for (const played of round) {
      if (played === undefined) continue;
      of++;
      if (!played.verdict.ok) failed++;
    }
    if (round.includes(undefined)) break;
  }
  return { failed, of };
}
