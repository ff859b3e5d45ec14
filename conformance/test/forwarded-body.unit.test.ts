import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { WorkerJudges } from "../judging/worker-judges.ts";
import { ForwardedBody, KEPT_BYTES } from "../proxy/forwarded-body.ts";
import { RECORDS_KEPT_UP_TO } from "../proxy/state-rules.ts";

// What the proxy keeps of a forwarded list: a list whose judging ends after its last byte came always
// gets its verdict, whatever the account does meanwhile. A test that never gets one fails by its timeout.

const ORDERS = 40_000;
const list = Buffer.from(
  `[${Array.from(
    { length: ORDERS },
    (_, at) => `{"id":${at + 1},"petId":1,"quantity":1,"shipDate":"2026-01-01T00:00:00Z","complete":false}`,
  ).join(",")}]`,
);

describe("a forwarded list judged on the judges' thread", () => {
  const judges = new WorkerJudges({ keepRecordsUpTo: RECORDS_KEPT_UP_TO });
  after(() => judges.close());

  it("gets its verdict when the account fills up while the rest is judged after the last byte", {
    timeout: 20_000,
  }, async () => {
    assert.ok(list.length > 2 * KEPT_BYTES);
    const held = new MemoryBudget(64 * 1024 * 1024);
    const body = new ForwardedBody({ maxBytes: 100 * 1024 * 1024, contentEncoding: undefined, judges, held });
    for (let at = 0; at < list.length; at += 64 * 1024) body.add(list.subarray(at, at + 64 * 1024));
    // Other answers take all the room left, and what the judge gives back as it goes: the list's ids,
    // indexed only now, find none.
    const others = held.limit - held.held + list.length;
    held.take(others);
    const outcome = await body.end();
    assert.equal(outcome.list?.count, ORDERS, "the whole list was judged: its last byte had come");
    assert.equal(outcome.list?.invalid.count, 0);
    held.give(others);
    body.release();
    assert.equal(held.held, 0, "all the body held, its index included, went back");
  });
});
