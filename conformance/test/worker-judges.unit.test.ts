import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { Worker } from "node:worker_threads";
import { builtInContract } from "../../contract/built-in.ts";
import type { FeedContext } from "../judging/list-feed.ts";
import { ListJudge, type ListVerdict } from "../judging/list-judge.ts";
import { INDEXED_ORDER_BYTES, MemoryBudget } from "../judging/memory-budget.ts";
import { BLOCK_BYTES, judgesShare, WorkerJudges } from "../judging/worker-judges.ts";
import { RECORDS_KEPT_UP_TO } from "../proxy/state-rules.ts";

// The proxy's list judges on their worker thread: the verdict that crosses back is the one the same judge
// gives on this thread, exact ids and the index included, and a thread that goes away fails its lists as
// judge faults, giving back all they held.

const contract = builtInContract();
const BIG_ID = "9007199254740993";

const list = Buffer.from(
  `[${[
    `{"id":${BIG_ID},"petId":1,"quantity":1,"shipDate":"2026-01-01T00:00:00Z","complete":false}`,
    `{"id":2,"petId":1,"quantity":"two","shipDate":"2026-01-01T00:00:00Z","complete":false}`,
    `{"id":2,"petId":1,"quantity":2,"shipDate":"2026-01-01T00:00:00Z","complete":false,"status":"placed"}`,
  ].join(",")}]`,
);

function context(
  held: MemoryBudget,
  failures: unknown[] = [],
  heard: { progressed: () => void; holding?: boolean } = { progressed: () => {} },
): FeedContext {
  return {
    held,
    holding: () => heard.holding ?? false,
    pause: () => {},
    progressed: () => heard.progressed(),
    failed: (error) => failures.push(error),
  };
}

function onThisThread(body: Buffer): ListVerdict {
  const judge = new ListJudge({
    validateOrder: contract.schema("Order"),
    orderPlan: contract.flatPlan("Order"),
    keepRecordsUpTo: RECORDS_KEPT_UP_TO,
  });
  judge.write(body);
  return judge.end();
}

/** What a verdict says, its index as ids and records, in a form deepEqual compares. */
function said(verdict: ListVerdict) {
  const { orders, records, repeats, ...rest } = verdict;
  return { ...rest, ids: [...orders.ids()], records: [...records], repeats: [...repeats] };
}

describe("the list judges' worker thread", () => {
  const judges = new WorkerJudges({ keepRecordsUpTo: RECORDS_KEPT_UP_TO });
  after(() => judges.close());

  it("gives the verdict the judge gives on the proxy's thread, ids past 2^53 exact, and gives back all it held", async () => {
    const held = new MemoryBudget();
    const feed = judges.feed(context(held));
    for (let at = 0; at < list.length; at += 7) assert.equal(feed.write(list.subarray(at, at + 7)), true);
    const verdict = await feed.end();
    assert.deepEqual(said(verdict), said(onThisThread(list)));
    assert.ok(verdict.orders.has(BIG_ID));
    assert.equal(verdict.invalid.count, 1);
    assert.equal(verdict.duplicates.count, 1);
    assert.equal(held.held, 0);
  });

  it("lets a list's bytes wait until its end while the account has room, and judges a held answer's at once", async () => {
    const held = new MemoryBudget();
    let waitingProgress = 0;
    const waiting = judges.feed(context(held, [], { progressed: () => waitingProgress++ }));
    assert.equal(waiting.write(list.subarray(0, 100)), true);
    // The thread answers in the order it was told: once the held answer's first bytes are judged, the
    // list handed over before them would have been heard of too, had it been judged as it came.
    let heldAnswerJudged!: () => void;
    const judged = new Promise<void>((resolve) => (heldAnswerJudged = resolve));
    const holding = judges.feed(context(held, [], { progressed: () => heldAnswerJudged(), holding: true }));
    holding.write(list.subarray(0, 100));
    await judged;
    assert.equal(waitingProgress, 0, "the list's bytes still wait for its end");
    waiting.write(list.subarray(100));
    const verdict = await waiting.end();
    assert.deepEqual(said(verdict), said(onThisThread(list)));
    assert.ok(waitingProgress > 0);
    holding.drop();
    assert.equal(held.held, 0);
  });

  it("says what its id index takes as allocated: ids out of order need a table beside them", async () => {
    const count = 5000;
    const orders = Array.from({ length: count }, (_, at) => `{"id":${count - at}}`);
    const feed = judges.feed(context(new MemoryBudget(), [], { progressed: () => {}, holding: true }));
    feed.write(Buffer.from(`[${orders.join(",")}]`));
    const verdict = await feed.end();
    assert.equal(verdict.orders.size, count);
    // Its arrays (8192 places of ids and digests, 16 bytes each) and its hash table (16384 slots of 4
    // bytes), with the table of before while ids move out of it: more than the share an order is reckoned.
    assert.ok(feed.indexBytes >= 8192 * 16 + 16384 * 4, `${feed.indexBytes} bytes`);
    assert.ok(feed.indexBytes > count * INDEXED_ORDER_BYTES);
  });

  it("judges bytes as they come once what waits is past half the account", async () => {
    const held = new MemoryBudget(2 * list.length - 2);
    let judgedBeforeEnd!: () => void;
    const judged = new Promise<void>((resolve) => (judgedBeforeEnd = resolve));
    const feed = judges.feed(context(held, [], { progressed: () => judgedBeforeEnd() }));
    assert.equal(feed.write(list), true);
    await judged;
    assert.deepEqual(said(await feed.end()), said(onThisThread(list)));
    assert.equal(held.held, 0);
  });

  it("judges a non-array body as the same value, numbers exact", async () => {
    const body = Buffer.from(`{"orders":[],"total":${BIG_ID}}`);
    const feed = judges.feed(context(new MemoryBudget()));
    feed.write(body);
    const verdict = await feed.end();
    assert.deepEqual(said(verdict), said(onThisThread(body)));
  });

  it("ends a list in part with what it judged, refuses bytes past the account, and lets go on drop", async () => {
    const held = new MemoryBudget(64);
    const feed = judges.feed(context(held));
    assert.equal(feed.write(list.subarray(0, 60)), true);
    assert.equal(feed.write(list.subarray(60, 200)), false, "past the account");
    const verdict = await feed.end("the judge fell behind");
    assert.match(
      verdict.partial ?? "",
      /^the judge fell behind: the first \d+ orders \(60 bytes\) were judged$/,
    );
    assert.equal(held.held, 0);
    const dropped = judges.feed(context(held));
    dropped.write(list.subarray(0, 10));
    dropped.drop();
    assert.equal(held.held, 0);
  });

  // A list whose first bytes the account could not hold was "not judged whole", whatever its root was.
  it("says a body is no array when its root began as `{` among the bytes it refused, and not for `[`", async () => {
    for (const [root, notArray] of [
      ['{"orders":[', { value: {} }],
      ['"orders', { value: "" }],
      ["<html>", { value: 0 }],
      ["[", undefined],
    ] as const) {
      const held = new MemoryBudget(64);
      const feed = judges.feed(context(held));
      assert.equal(feed.write(Buffer.from(" \r\n\t")), true);
      assert.equal(feed.write(Buffer.from(`${root}${" ".repeat(200)}`)), false, "past the account");
      const verdict = await feed.end("over the memory budget");
      assert.match(verdict.partial ?? "", /^over the memory budget: /);
      assert.deepEqual(verdict.notArray, notArray, root);
      assert.equal(held.held, 0);
    }
  });

  // Blocks transferred to the thread were array buffers of the proxy's own until its collector came to
  // them: a list of a hundred megabytes waiting for its end made the proxy's thread collect again and
  // again while it forwarded. Copied by the message, they are the judge thread's memory at once.
  it("moves a list's bytes over in resizable blocks of the list's own, never a buffer of the proxy's", async () => {
    const posts: Array<{ length?: number; resizable?: boolean; transfer: unknown[] }> = [];
    const postMessage = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (this: Worker, message: unknown, transfer?: unknown) {
      const chunk = (message as { chunk?: Uint8Array }).chunk;
      const buffer = chunk?.buffer as { resizable?: boolean } | undefined;
      posts.push({
        length: chunk?.length,
        resizable: buffer?.resizable,
        transfer: (transfer as unknown[]) ?? [],
      });
      return postMessage.call(this, message, transfer as never);
    };
    const big = Buffer.from(`[${Array.from({ length: 20_000 }, (_, id) => `{"id":${id + 1}}`).join(",")}]`);
    const copy = Buffer.from(big);
    try {
      const held = new MemoryBudget();
      const feed = judges.feed(context(held));
      for (let at = 0; at < big.length; at += 1000) feed.write(big.subarray(at, at + 1000));
      assert.equal((await feed.end()).count, 20_000);
      assert.equal(held.held, 0);
    } finally {
      Worker.prototype.postMessage = postMessage;
    }
    assert.ok(big.equals(copy), "the chunks written are left as they were");
    const blocks = posts.filter(({ length }) => length !== undefined);
    assert.ok(blocks.length > 1, "the list went over in several blocks");
    assert.ok(
      blocks.every(({ resizable, transfer }) => resizable === true && transfer.length === 1),
      "each block is a resizable buffer of its own, moved over",
    );
    assert.equal(blocks.filter(({ length }) => length === BLOCK_BYTES).length, blocks.length - 1);
    assert.equal(
      blocks.reduce((sum, { length }) => sum + (length ?? 0), 0),
      big.length,
    );
  });

  it("answers a list ended twice with its one verdict, the second end told nothing new", {
    timeout: 20_000,
  }, async () => {
    const held = new MemoryBudget();
    const feed = judges.feed(context(held));
    feed.write(list);
    const whole = feed.end();
    const again = feed.end("the account filled up meanwhile");
    assert.equal(again, whole);
    assert.deepEqual(said(await whole), said(onThisThread(list)));
    assert.equal(held.held, 0);
  });

  it("ends at once a list whose judge was let go of before its end: no verdict can come", {
    timeout: 20_000,
  }, async () => {
    const held = new MemoryBudget();
    const feed = judges.feed(context(held));
    feed.write(list);
    feed.drop();
    await assert.rejects(feed.end(), /let go of before the list ended/);
    assert.equal(held.held, 0);
  });

  // A thread that went away failed its lists as faults of the judge: the answers were failed for it.
  it("ends the lists of a thread that went away unjudged, never failed, and starts another for the next", async () => {
    const ownJudges = new WorkerJudges({ keepRecordsUpTo: 0 });
    const held = new MemoryBudget();
    const failures: unknown[] = [];
    const feed = ownJudges.feed(context(held, failures));
    const stillComing = ownJudges.feed(context(held, failures));
    feed.write(list.subarray(0, 20));
    assert.equal(stillComing.write(list.subarray(0, 20)), true);
    const ending = feed.end();
    await ownJudges.close();
    const gone = /^the judges' thread stopped \(exit code \d+\): nothing of this list was judged$/;
    assert.match((await ending).partial ?? "", gone);
    assert.equal(
      stillComing.write(list.subarray(20)),
      false,
      "a list still coming is refused its next bytes",
    );
    assert.match((await stillComing.end("the judge fell behind")).partial ?? "", gone);
    assert.deepEqual(failures, [], "no fault of the judge on either answer");
    assert.equal(held.held, 0);
    const next = ownJudges.feed(context(new MemoryBudget()));
    next.write(list);
    assert.equal((await next.end()).count, 3);
    await ownJudges.close();
  });

  // A thread that outgrew its heap was a judge fault, and what its readers held of the account stayed held.
  it("reports the lists of a thread that outgrew its heap over the memory budget, giving back all it held", async () => {
    const held = new MemoryBudget(1024 * 1024 * 1024);
    // One order of four million fields: built whole, as the judges' room allows, in a heap that has not.
    const ownJudges = new WorkerJudges(
      { keepRecordsUpTo: 0, account: { shared: held.shared, limit: held.limit } },
      {
        limits: { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 4 },
        reserve: 0,
        room: 1024 * 1024 * 1024,
      },
    );
    // The thread does not keep the process alive: the test does, until the thread is heard of.
    const alive = setInterval(() => {}, 1000);
    const failures: unknown[] = [];
    const wide = ownJudges.feed(context(held, failures));
    const besideIt = ownJudges.feed(context(held, failures));
    assert.equal(besideIt.write(list.subarray(0, 10)), true);
    wide.write(Buffer.from('[{"id":1'));
    for (let field = 0; field < 4_000_000; field += 100_000)
      wide.write(Buffer.from(Array.from({ length: 100_000 }, (_, at) => `,"f${field + at}":${at}`).join("")));
    wide.write(Buffer.from("}]"));
    const verdict = await wide.end();
    clearInterval(alive);
    const outgrown =
      /^over the memory budget \(the judges' thread outgrew its heap of 52 MB\): nothing of this list was judged$/;
    assert.match(verdict.partial ?? "", outgrown);
    assert.equal(verdict.allRecords, false);
    assert.equal(besideIt.write(list.subarray(10)), false, "a list still coming is refused its next bytes");
    assert.match((await besideIt.end("the judge fell behind")).partial ?? "", outgrown);
    assert.deepEqual(failures, [], "no fault of the judge");
    assert.equal(held.held, 0);
    const next = ownJudges.feed(context(held));
    next.write(list);
    assert.equal((await next.end()).count, 3, "the next list gets a thread of its own");
    await ownJudges.close();
  });

  // The thread's heap was bounded at the account plus 64 MiB, outside it: at 64MiB with --errors the
  // process grew past the budget + 100 MiB.
  it("reserves the thread's share of the account while it runs, and gives it back when it goes", async () => {
    const held = new MemoryBudget(64 * 1024 * 1024);
    const { reserve } = judgesShare(held.limit);
    assert.equal(reserve, 32 * 1024 * 1024, "half of 64 MiB");
    assert.equal(
      judgesShare(40 * 1024 * 1024).reserve,
      20 * 1024 * 1024,
      "half of an account under its least",
    );
    assert.equal(judgesShare(1024 * 1024).reserve, 512 * 1024, "half of an account too small for it");
    const ownJudges = new WorkerJudges({
      keepRecordsUpTo: 0,
      account: { shared: held.shared, limit: held.limit },
    });
    const feed = ownJudges.feed(context(held));
    feed.write(list);
    assert.equal((await feed.end()).count, 3);
    assert.equal(held.held, reserve, "the list's bytes given back, the thread's reserve held");
    await ownJudges.close();
    assert.equal(held.held, 0);
  });

  it("bounds the thread's heap within its share: half of the account, its judges' room half the heap's growth", () => {
    const MiB = 1024 * 1024;
    for (const accountMiB of [64, 256, 1024]) {
      const { limits, reserve, room } = judgesShare(accountMiB * MiB);
      const old = (limits.maxOldGenerationSizeMb ?? 0) * MiB;
      const heap = old + (limits.maxYoungGenerationSizeMb ?? 0) * MiB;
      assert.equal(reserve, Math.max(28, accountMiB / 2) * MiB, `${accountMiB} MiB`);
      assert.equal(heap + 8 * MiB, reserve, "its heap and what the thread costs beside it");
      assert.equal(room, (old - 8 * MiB) / 2, "half of the old generation past the thread's start");
    }
    assert.deepEqual(judgesShare(64 * MiB).limits, {
      maxOldGenerationSizeMb: 20,
      maxYoungGenerationSizeMb: 4,
    });
  });

  // The judges on the thread took from the proxy's account while the thread's heap was bounded apart from
  // it: what they kept was outside both.
  it("judges on the thread take from its room, not from the account: past it a list is judged in part", async () => {
    const held = new MemoryBudget(64 * 1024 * 1024);
    const share = { limits: {}, reserve: 1024 * 1024, room: 64 * 1024 };
    const ownJudges = new WorkerJudges(
      { keepRecordsUpTo: 0, account: { shared: held.shared, limit: held.limit } },
      share,
    );
    const twice = Array.from({ length: 4000 }, (_, at) => `{"id":${at >> 1},"quantity":1}`).join(",");
    const feed = ownJudges.feed(context(held));
    feed.write(Buffer.from(`[${twice}]`));
    const verdict = await feed.end();
    assert.match(
      verdict.partial ?? "",
      /^over the memory budget \(the ids listed more than once needing more memory/,
    );
    assert.equal(held.held, share.reserve, "the account holds the thread's reserve alone");
    const next = ownJudges.feed(context(held));
    next.write(list);
    assert.equal((await next.end()).partial, undefined, "the room given back at the verdict");
    await ownJudges.close();
    assert.equal(held.held, 0);
  });
});
