import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextTurnOfTheLoop } from "node:timers/promises";
import { builtInContract } from "../../contract/built-in.ts";
import { JudgeTurns } from "../judging/judge-turns.ts";
import { type FeedContext, InThreadJudges } from "../judging/list-feed.ts";
import { ListJudge } from "../judging/list-judge.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";

// The judges on the proxy's own thread give way to the forwarding as the judges' thread does: a list's
// bytes wait in the account for its end, and are judged as they come only once what waits passes half the
// account (or the answer is held until judged).

const contract = builtInContract();
const list = Buffer.from(
  `[${Array.from({ length: 200 }, (_, index) => `{"id":${index + 1},"petId":1,"quantity":1,"shipDate":"2026-01-01T00:00:00Z","complete":false}`).join(",")}]`,
);

const newJudge = () =>
  new ListJudge({ validateOrder: contract.schema("Order"), orderPlan: contract.flatPlan("Order") });

function context(held: MemoryBudget, progressed: () => void, holding = false): FeedContext {
  return {
    held,
    holding: () => holding,
    pause: () => {},
    progressed,
    failed: (error) => assert.fail(String(error)),
  };
}

describe("the judges on the proxy's own thread", () => {
  it("let a list's bytes wait in the account until its end while there is room", async () => {
    const held = new MemoryBudget();
    let progress = 0;
    const feed = new InThreadJudges(newJudge, new JudgeTurns()).feed(context(held, () => progress++));
    assert.equal(feed.write(list.subarray(0, 1000)), true);
    assert.equal(feed.write(list.subarray(1000)), true);
    // With no answer arriving, a judge's turn comes at the next turn of the event loop.
    for (let loop = 0; loop < 5; loop++) await nextTurnOfTheLoop();
    assert.equal(progress, 0, "judged before the list's end");
    assert.equal(held.held, list.length);
    const verdict = await feed.end();
    assert.equal(verdict.count, 200);
    assert.equal(verdict.invalid.count, 0);
    assert.ok(progress > 0);
    assert.equal(held.held, 0);
  });

  // A list whose first bytes the account could not hold was "not judged whole", whatever its root was.
  it("say a body is no array when its root began as `{` among the bytes refused, and not for `[`", async () => {
    for (const [root, notArray] of [
      ['{"orders":[', { value: {} }],
      ["true", { value: true }],
      ["[", undefined],
    ] as const) {
      const held = new MemoryBudget(64);
      const feed = new InThreadJudges(newJudge, new JudgeTurns()).feed(context(held, () => {}));
      assert.equal(feed.write(Buffer.from("\n ")), true);
      assert.equal(feed.write(Buffer.from(`${root}${" ".repeat(200)}`)), false, "past the account");
      const verdict = await feed.end("over the memory budget");
      assert.match(verdict.partial ?? "", /^over the memory budget: /);
      assert.deepEqual(verdict.notArray, notArray, root);
      assert.equal(held.held, 0);
    }
  });

  it("give one verdict to a list told twice that it ended", async () => {
    const held = new MemoryBudget();
    const feed = new InThreadJudges(newJudge, new JudgeTurns()).feed(context(held, () => {}));
    feed.write(list);
    const [first, second] = await Promise.all([feed.end(), feed.end("told again")]);
    assert.equal(first.count, 200);
    assert.equal(second, first);
    assert.equal(held.held, 0);
  });

  it("judge bytes as they come once what waits is past half the account, or the answer is held", async () => {
    for (const [limit, holding] of [
      [2 * list.length - 2, false],
      [undefined, true],
    ] as const) {
      const held = new MemoryBudget(limit);
      let judged!: () => void;
      const judgedBeforeEnd = new Promise<void>((resolve) => (judged = resolve));
      const feed = new InThreadJudges(newJudge, new JudgeTurns()).feed(
        context(held, () => judged(), holding),
      );
      assert.equal(feed.write(list), true);
      await judgedBeforeEnd;
      assert.equal((await feed.end()).count, 200);
      assert.equal(held.held, 0);
    }
  });
});
