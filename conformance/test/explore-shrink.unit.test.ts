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
  /** Every program in the order its runs began. */
  readonly began: string[] = [];
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
    this.began.push(key);
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

  it("first tries the program without the steps sent after the failing operations were answered", async () => {
    const twoCancelsOfSlotZero = (program: Program) =>
      program.flat().filter((step) => step.action.op === "cancel" && step.action.slot === 0).length >= 2;
    const player = new ScriptedPlayer(twoCancelsOfSlotZero);
    const at = (client: number, sentAt: number, orderId?: string) => ({
      client,
      sentAt,
      answeredAt: sentAt + 1,
      status: 204,
      ...(orderId === undefined
        ? { op: "list" as const, shown: new Map() }
        : { op: "cancel" as const, orderId }),
    });
    // bigProgram's steps as they were sent: the two cancels of slot 0 (order "10") were answered by 4.
    const operations = [
      at(0, 0),
      at(1, 0.5, "10"),
      at(2, 1, "12"),
      at(0, 2, "11"),
      at(2, 3, "10"),
      at(0, 4),
      at(1, 6),
      at(2, 8),
    ];
    const history = {
      given: { pending: [], shipped: [], missing: [], unknown: [] },
      records: [],
      operations,
    };
    const finding = { kind: "violation", rule: "cancel-once", orderId: "10", operations: [1, 4], spec: "" };
    const verdict = { ok: false, findings: [finding] } as unknown as HistoryVerdict;
    const original = { program: bigProgram, history: history as History, verdict };
    await shrink(player as unknown as Player, programArbitrary(shape), original, settings(5));
    const firstSmaller = player.began.find((key) => key !== JSON.stringify(bigProgram));
    assert.deepEqual(JSON.parse(firstSmaller ?? "null"), [
      [list, cancel(1), list],
      [cancel(0)],
      [cancel(2), cancel(0)],
    ]);
  });

  it("measures the first failing program on whole runs: one the shrinking budget cuts short is not a pass", async () => {
    // A target that fails every whole run, whose shrinking budget always ends during a round: a run told
    // to start no step past it is cut short and passes for want of steps, as the real player's would.
    const player = new ScriptedPlayer(() => true);
    const playMany = player.playMany.bind(player);
    player.playMany = async (program: Program, times: number, until?: number) => {
      const round = await playMany(program, times);
      return until === undefined ? round : round.map(() => played(program, true));
    };
    const { finding } = await shrinkFailing(player, bigProgram);
    assert.equal(finding.originalReproduced.failed, finding.originalReproduced.of);
    assert.ok(finding.originalReproduced.of > 0);
  });
});
