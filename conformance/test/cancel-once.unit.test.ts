import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cancelOnce } from "../proxy/state-rules/cancel-once.ts";
import { HOLDS } from "../proxy/state-rules/traffic-rule.ts";

const at = (seq: number) => ({ seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 });

describe("cancel-once", () => {
  it("is tested by each 204 and by no other answer", () => {
    for (const outcome of ["not-pending", "not-found", "unauthenticated", "other"] as const)
      assert.equal(
        cancelOnce.onCancel?.({ orderId: "1", status: 0, outcome, at: at(2), order: {} }),
        undefined,
      );
    assert.equal(
      cancelOnce.onCancel?.({ orderId: "1", status: 204, outcome: "cancelled", at: at(2), order: {} }),
      HOLDS,
    );
  });

  it("finds a second 204 for the same order, naming both", () => {
    const found = cancelOnce.onCancel?.({
      orderId: "9007199254740993",
      status: 204,
      outcome: "cancelled",
      at: at(3),
      order: { cancelled: at(1) },
    });
    assert.deepEqual(found, {
      message: "order 9007199254740993 was cancelled twice: #1 (10–15 ms), #3 (30–35 ms)",
      earlier: at(1),
      later: at(3),
    });
  });
});
