import { recordResponse } from "../judging/exchange.ts";
import { rulesJudgedBy } from "../model/state-rule-catalogue.ts";
import type { CheckResult } from "../reports/report.ts";
import type { RuleName } from "./scenarios.ts";
import type { ListSnapshot } from "./snapshot.ts";
import { type RuleContext, SUITE_STATE_RULES } from "./suite-state-rules.ts";

export type { RuleContext } from "./suite-state-rules.ts";

const SPEC = rulesJudgedBy("suite");

/** The list readings a rule compares, earlier first: the ends of its reproduction. */
export function ruleSnapshots(name: RuleName, context: RuleContext): Array<ListSnapshot | undefined> {
  return SUITE_STATE_RULES[name].compare(context);
}

export function checkRule(name: RuleName, scenarioId: string, context: RuleContext): CheckResult {
  const rule = SUITE_STATE_RULES[name];
  const spec = SPEC[name];
  const id = `${scenarioId}.${name}`;
  const [before, after] = rule.compare(context);
  const { initial } = context;
  const notKept = [initial, before, after].find((snapshot) => snapshot?.notKept !== undefined)?.notKept;
  if (notKept !== undefined)
    return { id, status: "skipped", message: `not judged: ${notKept}`, spec, notJudged: true };
  if (!initial.orders || (initial.unindexed && initial.orders.size === 0)) {
    // One defect, reported once: the list's own checks name it; what depends on reading it is not judged.
    return {
      id,
      status: "skipped",
      message: `not judged: the first list could not be read by id (${initial.problem ?? `no listed order has an int64 id`}), as the listOrders checks report`,
      spec,
    };
  }
  for (const snapshot of [before, after]) {
    if (!snapshot?.orders) {
      const problem = snapshot ? snapshot.problem : "the list was not read";
      return {
        id,
        status: "failed",
        message: `cannot check: listing the orders failed (${problem})`,
        spec,
        ...(snapshot ? { request: snapshot.exchange.request } : {}),
        ...(snapshot?.exchange.response ? { response: recordResponse(snapshot.exchange.response) } : {}),
      };
    }
  }
  const verdict = rule.judge(before as ListSnapshot, after as ListSnapshot, context);
  if (verdict.notJudged !== undefined)
    return { id, status: "skipped", message: `not judged: ${verdict.notJudged}`, spec };
  const unreadable = Math.max(before?.unindexed ?? 0, after?.unindexed ?? 0);
  if (unreadable > 0 && (verdict.unsure || (verdict.failure === undefined && rule.wholeList))) {
    return {
      id,
      status: "skipped",
      // What was found among the readable ones is said too: a given order not found may be a rounded id.
      message: `not judged whole: ${ordersHave(unreadable)} no int64 id, as the listOrders checks report; among the others, ${verdict.failure ?? verdict.success}`,
      spec,
    };
  }
  if (unreadable > 0 && verdict.failure !== undefined) {
    verdict.failure += ` (read among the orders with an int64 id; ${unreadable} have none)`;
  }
  if (verdict.failure === undefined) return { id, status: "passed", message: verdict.success, spec };
  return {
    id,
    status: "failed",
    message: verdict.failure,
    spec,
    ...(after ? { request: after.exchange.request } : {}),
    ...(after?.exchange.response ? { response: recordResponse(after.exchange.response) } : {}),
  };
}

/** "1 listed order has" / "3 listed orders have". */
export function ordersHave(count: number): string {
  return count === 1 ? "1 listed order has" : `${count} listed orders have`;
}
