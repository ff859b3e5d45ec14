import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { refusalsChangeNothing } from "../proxy/state-rules/refusals-change-nothing.ts";
import { HOLDS, type OrderChange } from "../proxy/state-rules/traffic-rule.ts";

const at = (seq: number) => ({ seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 });
const change = (fields: Partial<OrderChange>): OrderChange => ({
  kind: "changed",
  id: "3",
  earlier: at(1),
  later: at(4),
  order: undefined,
  refusedBetween: at(2),
  cancelInFlight: () => false,
  records: () => "{} (#1), then {} (#4)",
  ...fields,
});

describe("refusals-change-nothing", () => {
  it("is tested by each order refused between two lists that the earlier one listed", () => {
    const touched = { id: "3", refusedBetween: at(2), inEarlier: true, inLater: false };
    assert.equal(refusalsChangeNothing.onOrderTouchedBetween?.(touched), HOLDS);
    assert.equal(refusalsChangeNothing.onOrderTouchedBetween?.({ ...touched, inEarlier: false }), undefined);
    assert.equal(
      refusalsChangeNothing.onOrderTouchedBetween?.({
        id: "3",
        cancelledBetween: at(2),
        inEarlier: true,
        inLater: true,
      }),
      undefined,
    );
  });

  it("finds a refused order changed or gone, from the refusal to the later list", () => {
    assert.deepEqual(refusalsChangeNothing.onOrderChange?.(change({})), {
      message: "order 3 changed after the refused #2: {} (#1), then {} (#4)",
      earlier: at(2),
      later: at(4),
    });
    assert.deepEqual(refusalsChangeNothing.onOrderChange?.(change({ kind: "vanished" })), {
      message: "order 3 is missing from #4 after the refused #2; it was listed by #1",
      earlier: at(2),
      later: at(4),
    });
  });

  it("leaves what a cancel explains to the cancel's rules", () => {
    assert.equal(refusalsChangeNothing.onOrderChange?.(change({ cancelledBetween: at(3) })), undefined);
    const vanished = { kind: "vanished" as const };
    assert.equal(
      refusalsChangeNothing.onOrderChange?.(change({ ...vanished, order: { cancelled: at(3) } })),
      undefined,
    );
    assert.equal(
      refusalsChangeNothing.onOrderChange?.(change({ ...vanished, cancelInFlight: () => true })),
      undefined,
    );
    assert.equal(refusalsChangeNothing.onOrderChange?.(change({ refusedBetween: undefined })), undefined);
  });
});
