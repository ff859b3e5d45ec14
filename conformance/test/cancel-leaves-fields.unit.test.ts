import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cancelLeavesFields } from "../proxy/state-rules/cancel-leaves-fields.ts";
import { HOLDS, type OrderChange } from "../proxy/state-rules/traffic-rule.ts";

const at = (seq: number) => ({ seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 });
const change = (fields: Partial<OrderChange>): OrderChange => ({
  kind: "changed",
  id: "3",
  earlier: at(1),
  later: at(4),
  order: { cancelled: at(2) },
  cancelledBetween: at(2),
  cancelInFlight: () => false,
  records: () => '{"quantity":1} (#1), then {"quantity":2} (#4)',
  ...fields,
});

describe("cancel-leaves-fields", () => {
  it("is tested by each order cancelled between two lists that the later one lists", () => {
    const touched = { id: "3", cancelledBetween: at(2), inEarlier: true, inLater: true };
    assert.equal(cancelLeavesFields.onOrderTouchedBetween?.(touched), HOLDS);
    assert.equal(cancelLeavesFields.onOrderTouchedBetween?.({ ...touched, inLater: false }), undefined);
  });

  it("finds the record of an order changed by its cancel, showing both", () => {
    assert.deepEqual(cancelLeavesFields.onOrderChange?.(change({})), {
      message: 'order 3 changed when #2 cancelled it: {"quantity":1} (#1), then {"quantity":2} (#4)',
      earlier: at(2),
      later: at(4),
    });
  });

  it("judges no order gone, and no change without a cancel between the lists", () => {
    assert.equal(cancelLeavesFields.onOrderChange?.(change({ kind: "vanished" })), undefined);
    assert.equal(cancelLeavesFields.onOrderChange?.(change({ cancelledBetween: undefined })), undefined);
  });
});
