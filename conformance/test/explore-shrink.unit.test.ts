import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PlayedHistory, Player } from "../explore/player.ts";
import { type Program, programArbitrary, slotPlan, stepCount } from "../explore/program.ts";
import type { SearchSettings } from "../explore/search.ts";
import { shrink, triesPerCandidate } from "../explore/shrink.ts";
import type { History } from "../model/history.ts";
import type { HistoryVerdict } from "../model/linearizability.ts";
import { ALL_RUN_CHOICES } from "../model/spec-model.ts";

const shape = { clients: 4, steps: 4, maxWaitMs: 5, slots: slotPlan(false, false) };

/**
 * A player whose target fails a program only now and then, without timing: `fails(program, nth)` says
 * whether its nth play fails. It counts the plays of each program.
 */
class ScriptedPlayer {
  readonly plays = new Map<string, number>();
  constructor(private readonly fails: (program: Program, nth: number) => boolean) {}
  throwFailure(): void {}
  get choices() {
    return { possible: ALL_RUN_CHOICES, ruledOut: [] };
  }
  async playMany(program: Program, times: number): Promise<PlayedHistory[]> {
    return Array.from({ length: times }, () => this.#playOnce(program));
  }
  async firstFailure(program: Program, times: number): Promise<PlayedHistory | "passed"> {
    for (let run = 0; run < times; run += PARALLEL) {
      const round = await this.playMany(program, Math.min(PARALLEL, times - run));
      const failed = round.find((played) => !played.verdict.ok);
      if (failed !== undefined) return failed;
    }
    return "passed";
  }
  #playOnce(program: Program): PlayedHistory {
    const key = JSON.stringify(program);
    const nth = (this.plays.get(key) ?? 0) + 1;
    this.plays.set(key, nth);
    return played(program, !this.fails(program, nth));
  }
}

const PARALLEL = 8;

function played(program: Program, ok: boolean): PlayedHistory {
  const verdict = { ok, findings: [] } as unknown as HistoryVerdict;
  return { program, history: { operations: [] } as unknown as History, verdict };
}

function settings(replays: number): SearchSettings {
  return {
    seed: 1,
    shape,
    budgetMs: 1000,
    shrinkBudgetMs: 60_000,
    replays,
    finalReplays: 10,
    allowStaleMs: 0,
    parallel: PARALLEL,
    hookGraceMs: 1000,
  };
}

const list = { wait: 0, action: { op: "list" as const } };
const cancel = (slot: number) => ({ wait: 0, action: { op: "cancel" as const, slot } });
const bigProgram: Program = [
  [list, cancel(1), list],
  [cancel(0), list],
  [cancel(2), cancel(0), list],
];

/** A defect a program shows only with a list and a cancel of slot 0, one play in `every`. */
function rareDefect(every: number) {
  return (program: Program, nth: number) => {
    const actions = program.flat().map((step) => step.action);
    const needed =
      actions.some((action) => action.op === "list") &&
      actions.some((action) => action.op === "cancel" && action.slot === 0);
    return needed && nth % every === 0;
  };
}

describe("triesPerCandidate", () => {
  it("gives a rarely failing program enough runs that one failing as often fails in 95 of 100", () => {
    assert.equal(triesPerCandidate({ failed: 1, of: 10 }, 5), 29);
    assert.equal(triesPerCandidate({ failed: 3, of: 32 }, 5), 31);
    assert.ok(0.9 ** 29 <= 0.05 && 0.9 ** 28 > 0.05);
  });

  it("never gives fewer than --replays, nor more than 40", () => {
    assert.equal(triesPerCandidate({ failed: 8, of: 8 }, 5), 5);
    assert.equal(triesPerCandidate({ failed: 7, of: 8 }, 5), 5);
    assert.equal(triesPerCandidate({ failed: 0, of: 40 }, 5), 40);
    assert.equal(triesPerCandidate({ failed: 1, of: 1000 }, 5), 40);
    assert.equal(triesPerCandidate({ failed: 0, of: 0 }, 5), 5);
    assert.equal(triesPerCandidate({ failed: 8, of: 8 }, 60), 60);
  });
});

/** Shrinks `program`, taken to have failed once, with `player` playing it and its smaller ones. */
function shrinkFailing(player: ScriptedPlayer, program: Program) {
  return shrink(player as unknown as Player, programArbitrary(shape), played(program, false), settings(5));
}

describe("shrink", () => {
  it("plays the first failing program again to learn its rate, and tries each smaller one that often", async () => {
    const player = new ScriptedPlayer(rareDefect(10));
    const { finding } = await shrinkFailing(player, bigProgram);
    assert.deepEqual(finding.originalReproduced, { failed: 3, of: 32 });
    assert.equal(finding.triesPerCandidate, 31);
    assert.equal(finding.shrinkEnded, "minimal");
    assert.equal(stepCount(finding.minimal.program), 2, JSON.stringify(finding.minimal.program));
    // Every smaller program taken to pass was played the full count.
    for (const [key, plays] of player.plays) {
      const program = JSON.parse(key) as Program;
      if (!rareDefect(1)(program, 1)) assert.equal(plays, 31, key);
    }
  });

  it("replays a minimal program that fails rarely on past --final-replays, until one run fails", async () => {
    // Plays 13, 26 and 39 of the measuring fail; then none until the 52nd, the replays' 12th.
    const player = new ScriptedPlayer(rareDefect(13));
    const { finding } = await shrinkFailing(player, [[list, cancel(0)]]);
    assert.deepEqual(finding.originalReproduced, { failed: 3, of: 40 });
    assert.equal(stepCount(finding.minimal.program), 2);
    assert.deepEqual(finding.reproduced, { failed: 1, of: 16 });
  });

  it("says 0 of 40 when the minimal program never fails again", async () => {
    let failuresLeft = 3;
    const player = new ScriptedPlayer((program, nth) => {
      if (stepCount(program) < 2 || nth % 10 !== 0 || failuresLeft === 0) return false;
      failuresLeft--;
      return true;
    });
    const { finding } = await shrinkFailing(player, bigProgram);
    assert.deepEqual(finding.reproduced, { failed: 0, of: 40 });
  });
});
