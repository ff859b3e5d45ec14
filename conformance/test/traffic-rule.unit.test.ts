import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { endedBefore, readCancelStatus } from "../proxy/state-rules/traffic-rule.ts";
import { TrafficState } from "../proxy/state-rules.ts";

describe("what a state rule is told", () => {
  it("reads a cancel's status as §4.2 gives it", () => {
    assert.deepEqual([204, 409, 404, 401, 500, 200].map(readCancelStatus), [
      "cancelled",
      "not-pending",
      "not-found",
      "unauthenticated",
      "other",
      "other",
    ]);
  });

  it("orders two exchanges only when one was over before the other began", () => {
    const exchange = (startedAt: number, endedAt: number) => ({ seq: 0, label: "", startedAt, endedAt });
    assert.equal(endedBefore(exchange(0, 5), exchange(5, 9)), true);
    assert.equal(endedBefore(exchange(0, 6), exchange(5, 9)), false);
  });

  it("lets the keeper be given another reading of a cancel's status, which the rules then judge", () => {
    // A reading under which a 200 is a cancel carried out: the second one breaks cancel-once.
    const state = new TrafficState({}, undefined, (status) => (status === 200 ? "cancelled" : "other"));
    const cancel = (seq: number) =>
      state.observe({
        kind: "cancel",
        view: "k",
        session: "",
        orderId: "1",
        status: 200,
        at: { seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 },
      });
    assert.deepEqual(cancel(1), []);
    assert.deepEqual(
      cancel(2).map((finding) => finding.rule),
      ["cancel-once"],
    );
    assert.equal(state.evaluations["cancel-once"], 2);
  });
});
