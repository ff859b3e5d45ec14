import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { rulesJudgedBy, STATE_RULE_CATALOGUE } from "../model/state-rule-catalogue.ts";
import { STATE_RULES, TrafficState } from "../proxy/state-rules.ts";
import { SCENARIOS } from "../suite/scenarios.ts";

describe("one catalogue of state rules, read by both evaluators", () => {
  it("names each rule the suite's scenarios judge, and no other", () => {
    const played = new Set(SCENARIOS.flatMap((scenario) => scenario.rules ?? []));
    assert.deepEqual([...played].sort(), Object.keys(rulesJudgedBy("suite")).sort());
  });

  it("names each rule the proxy counts, with the catalogue's rationale", () => {
    assert.deepEqual(Object.keys(new TrafficState().evaluations).sort(), Object.keys(STATE_RULES).sort());
    for (const [name, spec] of Object.entries(STATE_RULES))
      assert.equal(spec, STATE_RULE_CATALOGUE[name as keyof typeof STATE_RULE_CATALOGUE].spec);
  });

  it("gives a rule both judge one name in both reports", () => {
    const shared = Object.keys(rulesJudgedBy("suite")).filter((name) => name in STATE_RULES);
    assert.deepEqual(shared.sort(), ["listed-orders-stay", "refusals-change-nothing"]);
  });

  it("cites the spec's sections for every rule", () => {
    for (const [name, rule] of Object.entries(STATE_RULE_CATALOGUE)) assert.match(rule.spec, /^§\d/, name);
  });
});
