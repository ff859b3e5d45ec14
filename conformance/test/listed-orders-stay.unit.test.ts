import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { listedOrdersStay } from "../proxy/state-rules/listed-orders-stay.ts";
import { HOLDS, type OrderChange } from "../proxy/state-rules/traffic-rule.ts";

const at = (seq: number) => ({ seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 });
const change = (fields: Partial<OrderChange>): OrderChange => ({
  kind: "vanished",
  id: "3",
  earlier: at(1),
  later: at(4),
  order: undefined,
  cancelInFlight: () => false,
  records: () => "",
  ...fields,
});

describe("listed-orders-stay", () => {
  it("is tested once by every list after an earlier one of its view", () => {
    assert.equal(listedOrdersStay.onList?.({ earlier: at(1), at: at(2) }), HOLDS);
  });

  it("finds an order gone with nothing to explain it, naming both lists", () => {
    assert.deepEqual(listedOrdersStay.onOrderChange?.(change({})), {
      message:
        "order 3, listed by #1, is missing from #4, and no cancel of it went through the proxy in between",
      earlier: at(1),
      later: at(4),
    });
  });

  it("notes a cancelled order gone, judges nothing, and leaves a refused one to its own rule", () => {
    const noted = listedOrdersStay.onOrderChange?.(change({ order: { cancelled: at(2) } }));
    assert.equal(noted && "note" in noted ? noted.note : undefined, "cancelled-not-listed");
    const inFlight = listedOrdersStay.onOrderChange?.(change({ cancelInFlight: () => true }));
    assert.match(inFlight?.message ?? "", /a cancel still in flight/);
    assert.equal(listedOrdersStay.onOrderChange?.(change({ refusedBetween: at(2) })), undefined);
    assert.equal(listedOrdersStay.onOrderChange?.(change({ kind: "changed" })), undefined);
  });
});
