import type fc from "fast-check";
import type { History } from "../model/history.ts";
import { checkHistory, commonChoices, type HistoryVerdict } from "../model/linearizability.ts";
import { ALL_RUN_CHOICES, type RunChoices } from "../model/spec-model.ts";
import { HookError } from "../target/hooks.ts";
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
  /** How long a final replay, which has no budget of its own, waits for the provision hook's orders. */
  hookGraceMs: number;
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
  /**
   * Why shrinking ended: no smaller program failed (1-minimal), or its budget or the orders ran out first,
   * or a hook failed (the search's `hookFailure`).
   */
  shrinkEnded: "minimal" | "budget" | "orders" | "interrupted" | "hook";
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
 *
 * The first error of a run, or of a hook behind the histories, halts them all: no history starts and no
 * step is sent after it, and it is thrown to whoever plays next.
 */
class Player {
  #choices: readonly RunChoices[] = ALL_RUN_CHOICES;
  readonly #ruledOut: ChoiceRuledOut[] = [];
  readonly #halt = new AbortController();
  readonly #halted: AbortSignal;
  readonly #driver: Driver;
  /** Aborted by the search's stop signal or once halted: no history asks for orders after it. */
  readonly stop: AbortSignal;
  /** The largest staleness a list of the search needed. */
  largestStaleMs = 0;

  constructor(
    driver: Driver,
    private readonly supply: OrderSupply,
    private readonly settings: SearchSettings,
    private readonly coverage: ExploreCoverage,
  ) {
    const halted = AbortSignal.any([this.#halt.signal, supply.broken]);
    this.#halted = halted;
    this.stop = settings.stop ? AbortSignal.any([halted, settings.stop]) : halted;
    // Asked before every step: a halted run's histories send nothing more.
    const pace = async () => {
      halted.throwIfAborted();
      await driver.pace();
      halted.throwIfAborted();
    };
    this.#driver = { ...driver, pace };
  }

  get halted(): boolean {
    return this.#halted.aborted;
  }

  /** The error that halted the run, if one did. */
  get failure(): unknown {
    return this.#halted.aborted ? this.#halted.reason : undefined;
  }

  throwFailure(): void {
    this.#halted.throwIfAborted();
  }

  /**
   * One run of a program on orders no earlier run cancelled, starting no step past `until`; undefined
   * when the orders are used up, or `ordersUntil` passed or the stop came while more were being provisioned.
   */
  async play(program: Program, until?: number, ordersUntil = until): Promise<PlayedHistory | undefined> {
    try {
      return await this.#play(program, until, ordersUntil);
    } catch (error) {
      this.#halt.abort(error);
      throw error;
    }
  }

  async #play(program: Program, until?: number, ordersUntil?: number): Promise<PlayedHistory | undefined> {
    const kinds = this.settings.shape.slots.kinds;
    const used = slotsUsed(program);
    const pendingSlots = used.filter((slot) => kinds[slot] === "pending");
    const shippedSlots = used.filter((slot) => kinds[slot] === "shipped");
    const pending = await this.supply.pending(pendingSlots.length, ordersUntil, this.stop);
    if (pending === undefined) return undefined;
    const shipped = await this.supply.shipped(shippedSlots.length, ordersUntil, this.stop);
    if (shipped === undefined) {
      await this.supply.release(pending);
      return undefined;
    }
    const ids: (string | undefined)[] = kinds.map(() => undefined);
    pendingSlots.forEach((slot, at) => {
      ids[slot] = pending[at];
    });
    shippedSlots.forEach((slot, at) => {
      ids[slot] = shipped[at];
    });
    const missingSlot = kinds.indexOf("missing");
    if (missingSlot !== -1) ids[missingSlot] = this.supply.missing[0];
    const orders = [...pending, ...shipped];
    const history = await playProgram(this.#driver, program, { kinds, ids }, until).catch((error) => {
      // A history cut short gives its orders back all the same, when the hook still can.
      this.supply.release(orders).catch(() => {});
      throw error;
    });
    await this.supply.release(orders);
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

  /**
   * The program played `times` times at once, each run on orders of its own; the error that halted one
   * is thrown once all are over.
   */
  async playMany(
    program: Program,
    times: number,
    until?: number,
    ordersUntil = until,
  ): Promise<(PlayedHistory | undefined)[]> {
    const runs = await Promise.allSettled(
      Array.from({ length: times }, () => this.play(program, until, ordersUntil)),
    );
    this.throwFailure();
    return runs.map((run) => (run.status === "fulfilled" ? run.value : undefined));
  }
}

/** How far shrinking got: the smallest failing program yet, and why it stopped. */
interface Shrinking {
  minimal: PlayedHistory;
  candidatesTried: number;
  shrinkEnded: ShrunkFinding["shrinkEnded"];
}

/**
 * Smaller programs, fast-check's candidates and the program less one step, each played several times on
 * fresh orders; the first that still fails is kept and shrunk in turn, until none does: removing any one
 * step then let every try pass. Then the minimal program is played again to say how often it fails. A
 * hook that fails meanwhile ends both there: the smallest failing program yet is the finding.
 */
async function shrink(
  player: Player,
  arbitrary: fc.Arbitrary<Program>,
  original: PlayedHistory,
  settings: SearchSettings,
): Promise<{ finding: ShrunkFinding; hookFailure?: string }> {
  const shrinking: Shrinking = { minimal: original, candidatesTried: 0, shrinkEnded: "minimal" };
  const reproduced = { failed: 0, of: 0 };
  let hookFailure: string | undefined;
  try {
    await shrinkFurther(player, arbitrary, shrinking, settings);
  } catch (error) {
    hookFailure = hookFailureOf(error);
    shrinking.shrinkEnded = "hook";
  }
  try {
    if (hookFailure === undefined) await replay(player, shrinking.minimal.program, settings, reproduced);
  } catch (error) {
    hookFailure = hookFailureOf(error);
  }
  const { possible, ruledOut } = player.choices;
  const { minimal, candidatesTried, shrinkEnded } = shrinking;
  const finding = {
    original,
    minimal,
    reproduced,
    candidatesTried,
    shrinkEnded,
    choices: possible,
    ruledOut,
  };
  return { finding, ...(hookFailure !== undefined ? { hookFailure } : {}) };
}

/** A hook's error, which leaves a finding standing, as its message; any other error is thrown on. */
function hookFailureOf(error: unknown): string {
  if (error instanceof HookError) return error.message;
  throw error;
}

async function shrinkFurther(
  player: Player,
  arbitrary: fc.Arbitrary<Program>,
  shrinking: Shrinking,
  settings: SearchSettings,
): Promise<void> {
  const deadline = performance.now() + settings.shrinkBudgetMs;
  const tried = new Set<string>();
  player.throwFailure();
  smaller: for (;;) {
    for (const candidate of candidatesOf(arbitrary, shrinking.minimal.program)) {
      const key = JSON.stringify(candidate);
      if (tried.has(key) || stepCount(candidate) === 0) continue;
      tried.add(key);
      if (settings.stop?.aborted || performance.now() >= deadline) {
        shrinking.shrinkEnded = settings.stop?.aborted ? "interrupted" : "budget";
        return;
      }
      shrinking.candidatesTried++;
      const outcome = await player.firstFailure(candidate, settings.replays, deadline);
      if (outcome === undefined) {
        shrinking.shrinkEnded = settings.stop?.aborted ? "interrupted" : outOf(deadline);
        return;
      }
      if (outcome !== "passed") {
        shrinking.minimal = outcome;
        continue smaller;
      }
    }
    return;
  }
}

function* candidatesOf(arbitrary: fc.Arbitrary<Program>, program: Program): Iterable<Program> {
  yield* smallerPrograms(arbitrary, program);
  yield* withoutOneStep(program);
}

/**
 * The minimal program played `finalReplays` times more, on fresh orders: how many of those runs failed,
 * counted into `reproduced` as they end. Each round waits for orders at most `hookGraceMs`.
 */
async function replay(
  player: Player,
  program: Program,
  settings: SearchSettings,
  reproduced: { failed: number; of: number },
): Promise<void> {
  const times = settings.finalReplays;
  while (reproduced.of < times && !settings.stop?.aborted) {
    const ordersUntil = performance.now() + settings.hookGraceMs;
    const round = await player.playMany(
      program,
      Math.min(settings.parallel, times - reproduced.of),
      undefined,
      ordersUntil,
    );
    for (const played of round) {
      if (played === undefined) continue;
      reproduced.of++;
      if (!played.verdict.ok) reproduced.failed++;
    }
    if (round.includes(undefined)) break;
  }
}
