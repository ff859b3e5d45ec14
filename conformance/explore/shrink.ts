import type fc from "fast-check";
import type { RunChoices } from "../model/spec-model.ts";
import { HookError } from "../target/hooks.ts";
import { type ChoiceRuledOut, outOf, type PlayedHistory, type Player } from "./player.ts";
import { type Program, smallerPrograms, stepCount, withoutLaterSteps, withoutOneStep } from "./program.ts";
import type { SearchSettings } from "./search.ts";

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
   * The first failing program played again before shrinking, to learn how often it fails, and from that
   * how many runs each smaller program got before it was taken to pass (at least `--replays`).
   */
  originalReproduced: { failed: number; of: number };
  triesPerCandidate: number;
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

/** How far shrinking got: the smallest failing program yet, and why it stopped. */
interface Shrinking {
  minimal: PlayedHistory;
  candidatesTried: number;
  originalReproduced: { failed: number; of: number };
  triesPerCandidate: number;
  shrinkEnded: ShrunkFinding["shrinkEnded"];
}

/** Failures of the first failing program's replays that are enough to tell how often it fails. */
const RATE_FAILURES = 3;
/** Replays of the first failing program at most, and runs of a smaller program at most. */
const MOST_TRIES = 40;
/** The chance, at most, that a smaller program failing as often as the first is taken to pass. */
const MISS_CHANCE = 0.05;

/**
 * How many runs a smaller program needs before it is taken to pass: enough that one failing as often as
 * the first failing program did in its replays fails in one of them but for `MISS_CHANCE`. A defect seen
 * once in ten runs needs 29; one seen every time, `least`.
 */
export function triesPerCandidate(rate: { failed: number; of: number }, least: number): number {
  if (rate.of === 0) return least;
  const failing = Math.max(rate.failed, 1) / Math.max(rate.of, 1);
  if (failing >= 1) return least;
  const needed = Math.ceil(Math.log(MISS_CHANCE) / Math.log(1 - failing));
  return Math.max(least, Math.min(MOST_TRIES, needed));
}

/**
 * The first failing program is played again to learn how often it fails. Then smaller programs, fast-check's
 * candidates and the program less one step, each played as often as that rate needs, on fresh orders; the
 * first that still fails is kept and shrunk in turn, until none does: removing any one step then let every
 * try pass. Then the minimal program is played again to say how often it fails. A
 * hook that fails meanwhile ends both there: the smallest failing program yet is the finding.
 */
export async function shrink(
  player: Player,
  arbitrary: fc.Arbitrary<Program>,
  original: PlayedHistory,
  settings: SearchSettings,
): Promise<{ finding: ShrunkFinding; hookFailure?: string }> {
  const shrinking: Shrinking = {
    minimal: original,
    candidatesTried: 0,
    originalReproduced: { failed: 0, of: 0 },
    triesPerCandidate: settings.replays,
    shrinkEnded: "minimal",
  };
  const reproduced = { failed: 0, of: 0 };
  let hookFailure: string | undefined;
  try {
    const deadline = performance.now() + settings.shrinkBudgetMs;
    player.throwFailure();
    if (await measureFailing(player, shrinking, settings, deadline))
      await shrinkFurther(player, arbitrary, shrinking, settings, deadline);
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
  const { minimal, candidatesTried, originalReproduced, shrinkEnded } = shrinking;
  const finding = {
    original,
    minimal,
    reproduced,
    candidatesTried,
    originalReproduced,
    triesPerCandidate: shrinking.triesPerCandidate,
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

/**
 * The first failing program played in rounds of `parallel` until it failed `RATE_FAILURES` times or
 * `MOST_TRIES` runs are over, which sets the tries of each smaller program; false when shrinking is over
 * before it began (budget, stop, orders).
 */
async function measureFailing(
  player: Player,
  shrinking: Shrinking,
  settings: SearchSettings,
  deadline: number,
): Promise<boolean> {
  const rate = shrinking.originalReproduced;
  while (rate.failed < RATE_FAILURES && rate.of < MOST_TRIES) {
    if (!stillShrinking(shrinking, settings, deadline)) return false;
    const times = Math.min(settings.parallel, MOST_TRIES - rate.of);
    // Played whole, never cut at the deadline: a run cut short passes for want of steps, which would
    // read as a program that fails less often than it does.
    const program = shrinking.minimal.program;
    if (!(await countedRound(player, program, times, rate, undefined, deadline))) {
      shrinking.shrinkEnded = settings.stop?.aborted ? "interrupted" : outOf(deadline);
      return false;
    }
  }
  shrinking.triesPerCandidate = triesPerCandidate(rate, settings.replays);
  return true;
}

/** False, with why, once the stop came or the shrinking budget is spent. */
function stillShrinking(shrinking: Shrinking, settings: SearchSettings, deadline: number): boolean {
  if (!settings.stop?.aborted && performance.now() < deadline) return true;
  shrinking.shrinkEnded = settings.stop?.aborted ? "interrupted" : "budget";
  return false;
}

async function shrinkFurther(
  player: Player,
  arbitrary: fc.Arbitrary<Program>,
  shrinking: Shrinking,
  settings: SearchSettings,
  deadline: number,
): Promise<void> {
  const tried = new Set<string>();
  smaller: for (;;) {
    for (const candidate of candidatesOf(arbitrary, shrinking.minimal)) {
      const key = JSON.stringify(candidate);
      if (tried.has(key) || stepCount(candidate) === 0) continue;
      tried.add(key);
      if (!stillShrinking(shrinking, settings, deadline)) return;
      shrinking.candidatesTried++;
      const outcome = await player.firstFailure(candidate, shrinking.triesPerCandidate, deadline);
      if (outcome === undefined) {
        shrinking.shrinkEnded = settings.stop?.aborted ? "interrupted" : outOf(deadline);
        return;
      }
      if (outcome !== "passed") {
        shrinking.minimal = outcome;
        continue smaller;
      }
      // Runs cut short by the deadline may pass for want of steps: no 1-minimal claim rests on them.
      if (!stillShrinking(shrinking, settings, deadline)) return;
    }
    return;
  }
}

/**
 * The likeliest removal first: every step sent after the failing operations were all answered, which
 * cannot have caused them; then fast-check's candidates, then the program less one step.
 */
function* candidatesOf(arbitrary: fc.Arbitrary<Program>, failing: PlayedHistory): Generator<Program> {
  const cause = withoutLaterSteps(failing.program, failing.history, failing.verdict.findings);
  if (cause !== undefined) yield cause;
  yield* smallerPrograms(arbitrary, failing.program);
  yield* withoutOneStep(failing.program);
}

/**
 * The minimal program played `finalReplays` times more, on fresh orders, and on while none of them failed,
 * up to `MOST_TRIES`: how many of those runs failed, counted into `reproduced` as they end, so that a rare
 * defect reads "failed 1 of 23", not "0 of 10". Each round waits for orders at most `hookGraceMs`.
 */
async function replay(
  player: Player,
  program: Program,
  settings: SearchSettings,
  reproduced: { failed: number; of: number },
): Promise<void> {
  const wanted = () =>
    reproduced.failed === 0 ? Math.max(settings.finalReplays, MOST_TRIES) : settings.finalReplays;
  while (reproduced.of < wanted() && !settings.stop?.aborted) {
    const ordersUntil = performance.now() + settings.hookGraceMs;
    const times = Math.min(settings.parallel, wanted() - reproduced.of);
    if (!(await countedRound(player, program, times, reproduced, undefined, ordersUntil))) break;
  }
}

/**
 * One round of `times` runs of a program at once, each counted into `runs` as it ends; false when the
 * orders ran out (or `ordersUntil` passed) before every run could start.
 */
async function countedRound(
  player: Player,
  program: Program,
  times: number,
  runs: { failed: number; of: number },
  until?: number,
  ordersUntil = until,
): Promise<boolean> {
  const round = await player.playMany(program, times, until, ordersUntil);
  for (const played of round) {
    if (played === undefined) continue;
    runs.of++;
    if (!played.verdict.ok) runs.failed++;
  }
  return !round.includes(undefined);
}
