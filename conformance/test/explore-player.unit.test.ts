import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Driver } from "../explore/driver.ts";
import type { OrderSupply } from "../explore/orders.ts";
import { type PlayedHistory, Player } from "../explore/player.ts";
import type { Program } from "../explore/program.ts";
import { noCoverage, type SearchSettings } from "../explore/search.ts";
import type { History } from "../model/history.ts";
import type { HistoryVerdict } from "../model/linearizability.ts";

const PARALLEL = 8;

const settings: SearchSettings = {
  seed: 1,
  shape: { clients: 1, steps: 1, maxWaitMs: 0, slots: { kinds: ["pending"] } },
  budgetMs: 1000,
  shrinkBudgetMs: 1000,
  replays: 5,
  finalReplays: 10,
  allowStaleMs: 0,
  parallel: PARALLEL,
  hookGraceMs: 1000,
};

/**
 * A player whose runs take turns of the event loop instead of requests: `turnsOf(nth)` turns for its nth
 * run (from 1), which fails when `fails(nth)`. It notes which runs began while the first was under way.
 */
class TurnPlayer extends Player {
  began = 0;
  begunDuringFirst = 0;
  #firstOver = false;
  constructor(
    private readonly turnsOf: (nth: number) => number,
    private readonly fails: (nth: number) => boolean = () => false,
  ) {
    const supply = { broken: new AbortController().signal } as OrderSupply;
    super({ pace: () => undefined } as unknown as Driver, supply, settings, noCoverage());
  }
  override async play(program: Program): Promise<PlayedHistory> {
    const nth = ++this.began;
    if (nth > 1 && !this.#firstOver) this.begunDuringFirst++;
    for (let turn = 0; turn < this.turnsOf(nth); turn++) await new Promise(setImmediate);
    if (nth === 1) this.#firstOver = true;
    const verdict = { ok: !this.fails(nth), findings: [] } as unknown as HistoryVerdict;
    return { program, history: { operations: [] } as unknown as History, verdict };
  }
}

const program: Program = [[{ wait: 0, action: { op: "list" } }]];

describe("explore's player, a program's tries", () => {
  it("starts the next try as each ends, not in rounds that wait for their slowest", async () => {
    const player = new TurnPlayer((nth) => (nth === 1 ? 50 : 1));
    assert.equal(await player.firstFailure(program, 31, Number.POSITIVE_INFINITY), "passed");
    assert.equal(player.began, 31);
    assert.equal(player.begunDuringFirst, 30);
  });

  it("starts none after a try failed, and returns the one that failed", async () => {
    const player = new TurnPlayer(
      (nth) => nth,
      (nth) => nth === 3,
    );
    const outcome = await player.firstFailure(program, 40, Number.POSITIVE_INFINITY);
    assert.ok(outcome !== "passed" && outcome !== undefined && !outcome.verdict.ok);
    // The first PARALLEL began at once, and two more as the first two ended before the third failed.
    assert.equal(player.began, PARALLEL + 2);
  });

  it("plays no more than the tries asked for, and fewer at once when they are fewer", async () => {
    const player = new TurnPlayer(() => 1);
    assert.equal(await player.firstFailure(program, 3, Number.POSITIVE_INFINITY), "passed");
    assert.equal(player.began, 3);
  });
});
