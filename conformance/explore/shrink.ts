import type fc from "fast-check";
import type { RunChoices } from "../model/spec-model.ts";
import { HookError } from "../target/hooks.ts";
import { type ChoiceRuledOut, outOf, type PlayedHistory, type Player } from "./player.ts";
import { type Program, smallerPrograms, stepCount, withoutOneStep } from "./program.ts";
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
  shrinkEnded: ShrunkFinding["shrinkEnded"];
}

/**
 * Smaller programs, fast-check's candidates and the program less one step, each played several times on
 * fresh orders; the first that still fails is kept and shrunk in turn, until none does: removing any one
 * step then let every try pass. Then the minimal program is played again to say how often it fails. A
 * hook that fails meanwhile ends both there: the smallest failing program yet is the finding.
 */
export async function shrink(
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
