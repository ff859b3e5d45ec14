import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { noCancelAfterConflict } from "../proxy/state-rules/no-cancel-after-conflict.ts";
import { HOLDS, type OrderMemory } from "../proxy/state-rules/traffic-rule.ts";

const at = (seq: number) => ({ seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 });
const cancelled = (order: OrderMemory, seq = 5) =>
  noCancelAfterConflict.onCancel?.({ orderId: "7", status: 204, outcome: "cancelled", at: at(seq), order });

describe("no-cancel-after-conflict", () => {
  it("finds a 204 after a 409 for the order was answered", () => {
    assert.deepEqual(cancelled({ conflicted: at(2) }), {
      message: "order 7 was cancelled after a 409 said it could not be: #2 (20–25 ms), #5 (50–55 ms)",
      earlier: at(2),
      later: at(5),
    });
  });

  it("holds for a 204 while the 409 was still in flight, and leaves a second 204 to cancel-once", () => {
    const overlapping = { seq: 4, label: "#4", startedAt: 45, endedAt: 60 };
    assert.equal(cancelled({ conflicted: overlapping }), HOLDS);
    assert.equal(cancelled({ conflicted: at(2), cancelled: at(1) }), HOLDS);
    assert.equal(cancelled({}), HOLDS);
  });

  it("is not tested by a 409 itself", () => {
    const answer = { orderId: "7", status: 409, outcome: "not-pending" as const, at: at(3), order: {} };
    assert.equal(noCancelAfterConflict.onCancel?.(answer), undefined);
  });
});
