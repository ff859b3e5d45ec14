import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtInContract } from "../../contract/built-in.ts";
import { judgeListBody } from "../judging/list-judge.ts";
import type { ListSnapshot } from "../suite/snapshot.ts";
import { type RuleContext, SUITE_STATE_RULES } from "../suite/suite-state-rules.ts";

/** A snapshot of a list of these orders, as the suite keeps it. */
function snapshot(orders: ReadonlyArray<{ id: number; quantity?: number }>): ListSnapshot {
  const verdict = judgeListBody(Buffer.from(JSON.stringify(orders)), {
    validateOrder: builtInContract().schema("Order"),
    keepRecordsUpTo: 100,
  });
  const exchange = { request: { method: "GET", path: "/v1/store/orders", headers: {} } };
  return { exchange, orders: verdict.orders, records: verdict.records, unindexed: verdict.unindexed };
}

const three = snapshot([{ id: 1 }, { id: 2 }, { id: 3 }]);
const context = (fields: Partial<RuleContext>): RuleContext => ({
  initial: three,
  afterRefused: three,
  final: three,
  pendingId: "2",
  shippedId: "3",
  ...fields,
});
const judge = (name: keyof typeof SUITE_STATE_RULES, fields: Partial<RuleContext>) => {
  const rule = SUITE_STATE_RULES[name];
  const whole = context(fields);
  const [before, after] = rule.compare(whole);
  assert.ok(before && after);
  return rule.judge(before, after, whole);
};

describe("the suite's state rules, one object each", () => {
  it("names each object after its rule", () => {
    for (const [name, rule] of Object.entries(SUITE_STATE_RULES)) assert.equal(rule.name, name);
  });

  it("refusals-change-nothing shows what changed between the first list and the one after the refusals", () => {
    const after = snapshot([{ id: 1 }, { id: 3, quantity: 2 }]);
    assert.equal(
      judge("refusals-change-nothing", { afterRefused: after }).failure,
      'the list changed after requests refused with 401: order 2 vanished; order 3 was {"id":3}, now {"id":3,"quantity":2}',
    );
    assert.equal(judge("refusals-change-nothing", {}).failure, undefined);
  });

  it("listed-orders-stay ignores the orders the run cancels and finds any other gone", () => {
    const final = snapshot([{ id: 1 }]);
    assert.equal(judge("listed-orders-stay", { final, raceId: "3" }).failure, undefined);
    assert.equal(
      judge("listed-orders-stay", { final }).failure,
      "orders other than 2 vanished after the cancel: 3",
    );
  });

  it("shipped-order-unchanged leaves an order gone before the cancels to refusals-change-nothing", () => {
    const afterRefused = snapshot([{ id: 1 }, { id: 2 }]);
    assert.match(
      judge("shipped-order-unchanged", { afterRefused }).notJudged ?? "",
      /refusals-change-nothing/,
    );
  });

  it("shipped-order-unchanged says what the cancels were answered, not that they were 409s", () => {
    const final = snapshot([{ id: 1 }, { id: 2 }]);
    assert.equal(
      judge("shipped-order-unchanged", { final, scenarioAnswers: [204, 204] }).failure,
      "order 3 is no longer listed after its cancels, answered 204 and 204",
    );
    assert.equal(
      judge("shipped-order-unchanged", { final, scenarioAnswers: [409, null] }).failure,
      "order 3 is no longer listed after its cancels, answered 409 and no answer",
    );
    assert.equal(
      judge("shipped-order-unchanged", { scenarioAnswers: [204, 409] }).success,
      "order 3 is listed unchanged after its cancels, answered 204 and 409",
    );
  });

  it("pending-order-listed is unsure of an order not found, which may be a rounded id", () => {
    assert.equal(judge("pending-order-listed", { pendingId: "9007199254740993" }).unsure, true);
  });

  it("list-ignores-paging-parameters compares the first list with the scenario's own", () => {
    const scenarioList = snapshot([{ id: 1 }]);
    assert.match(
      judge("list-ignores-paging-parameters", { scenarioList }).failure ?? "",
      /2 of 3 orders are missing/,
    );
  });
});
