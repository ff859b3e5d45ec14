import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextTurnOfTheLoop } from "node:timers/promises";
import { JudgeTurns } from "../judging/judge-turns.ts";

/** A judge with `turns` turns of work, logging each under its name. */
function judge(name: string, turns: number, log: string[]): () => boolean {
  let left = turns;
  return () => {
    log.push(name);
    left--;
    return left > 0;
  };
}

async function settled(log: string[], length: number): Promise<void> {
  while (log.length < length) await nextTurnOfTheLoop();
}

describe("the judges' shared turns", () => {
  it("serves the oldest judge to its end before the next", async () => {
    const turns = new JudgeTurns();
    const log: string[] = [];
    turns.want(judge("a", 3, log));
    turns.want(judge("b", 2, log));
    await settled(log, 5);
    assert.deepEqual(log, ["a", "a", "a", "b", "b"]);
  });

  it("takes a turn at the next turn of the event loop only while no answer is arriving", async (t) => {
    // Only timers are mocked: a turn that waits for one waits until the test moves the clock.
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const turns = new JudgeTurns();
    const log: string[] = [];
    const arrived = turns.arriving();
    turns.want(judge("a", 3, log));
    for (let loop = 0; loop < 5; loop++) await nextTurnOfTheLoop();
    assert.deepEqual(log, []);
    t.mock.timers.tick(16);
    assert.deepEqual(log, ["a"]);
    arrived();
    arrived();
    // The next turn was set on a timer while the answer arrived; the one after it runs without.
    t.mock.timers.tick(16);
    for (let loop = 0; loop < 5; loop++) await nextTurnOfTheLoop();
    assert.deepEqual(log, ["a", "a", "a"]);
  });

  it("queues a judge once however often it asks", async () => {
    const turns = new JudgeTurns();
    const log: string[] = [];
    const a = judge("a", 1, log);
    turns.want(a);
    turns.want(a);
    await settled(log, 1);
    for (let loop = 0; loop < 5; loop++) await nextTurnOfTheLoop();
    assert.deepEqual(log, ["a"]);
  });
});
