import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TRAFFIC_RULES } from "../proxy/state-rules/traffic-rules.ts";
import { STATE_RULES, TrafficState } from "../proxy/state-rules.ts";

describe("the proxy's state rules, one object each", () => {
  it("has one object for each rule the catalogue gives the proxy, under its own name", () => {
    assert.deepEqual(Object.keys(TRAFFIC_RULES).sort(), Object.keys(STATE_RULES).sort());
    for (const [name, rule] of Object.entries(TRAFFIC_RULES)) assert.equal(rule.name, name);
  });

  it("gives every rule a hook that puts it to the test, so the keeper can count it", () => {
    for (const rule of Object.values(TRAFFIC_RULES))
      assert.ok(rule.onCancel ?? rule.onList ?? rule.onOrderTouchedBetween ?? rule.onStory, rule.name);
  });

  it("counts a rule's tests in the keeper, from its verdicts", () => {
    const state = new TrafficState();
    const at = (seq: number) => ({ seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 });
    for (let seq = 1; seq <= 3; seq++)
      state.observe({
        kind: "cancel",
        view: "k",
        session: "",
        orderId: String(seq),
        status: 204,
        at: at(seq),
      });
    assert.equal(state.evaluations["cancel-once"], 3);
    assert.equal(state.evaluations["no-cancel-after-conflict"], 3);
    assert.equal(state.evaluations["listed-orders-stay"], 0);
  });
});
