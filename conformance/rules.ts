import { recordResponse } from "./http-client.ts";
import type { CheckResult } from "./report.ts";
import type { RuleName } from "./scenarios.ts";
import type { ListSnapshot } from "./snapshot.ts";

export interface RuleContext {
  /** The list before anything ran. */
  initial: ListSnapshot;
  /** The list after the phase that must change nothing. */
  afterRefused: ListSnapshot;
  /** The list after the cancels. */
  final: ListSnapshot;
  /** The list read by the scenario's own listOrders step, if it has one. */
  scenarioList?: ListSnapshot;
  pendingId?: string;
  /** The race scenario's order, which the run cancels too. */
  raceId?: string;
  shippedId?: string;
}

interface Rule {
  spec: string;
  /** The snapshots the rule compares, earlier first. */
  compare(context: RuleContext): [ListSnapshot | undefined, ListSnapshot | undefined];
  /** A failure message, or undefined when the rule holds; also told the message for success. */
  judge(
    before: Map<string, string>,
    after: Map<string, string>,
    context: RuleContext,
  ): { failure?: string; success: string };
}

const RULES: Record<RuleName, Rule> = {
  "refused-requests-change-nothing": {
    spec: "§5.4: a request without a valid key is refused with 401, so it changes nothing",
    compare: (context) => [context.initial, context.afterRefused],
    judge(before, after) {
      const changed = differences(before, after);
      return changed.length === 0
        ? { success: "the list is the same before and after the refused requests" }
        : {
            failure: `the list changed after requests refused with 401: ${changed.slice(0, 5).join("; ")}`,
            success: "",
          };
    },
  },
  "list-ignores-paging-parameters": {
    spec: "§4.1, §8, §9.2: no filtering or pagination; the call returns every order placed in the store",
    compare: (context) => [context.initial, context.scenarioList],
    judge(before, after) {
      const missing = [...before.keys()].filter((id) => !after.has(id));
      return missing.length === 0
        ? { success: `all ${before.size} orders listed with paging and filter parameters too` }
        : {
            failure: `with limit/offset/page/status parameters ${missing.length} of ${before.size} orders are missing (e.g. ${missing.slice(0, 5).join(", ")})`,
            success: "",
          };
    },
  },
  "shipped-order-unchanged": {
    spec: "§3, §4.2: when the order is not pending the call fails with 409 and the order is unchanged",
    compare: (context) => [context.initial, context.final],
    judge(before, after, { shippedId = "" }) {
      const was = before.get(shippedId);
      const now = after.get(shippedId);
      if (was === undefined) return { failure: `order ${shippedId} is not in the first list`, success: "" };
      if (now === undefined)
        return { failure: `order ${shippedId} disappeared from the list after its 409`, success: "" };
      return now === was
        ? { success: `order ${shippedId} is listed unchanged after its 409s` }
        : { failure: `order ${shippedId} changed after a 409: was ${was}, now ${now}`, success: "" };
    },
  },
  "pending-order-listed": {
    spec: "§4.1: the list returns every order placed in the store, so an order that can be cancelled is listed",
    compare: (context) => [context.initial, context.initial],
    judge(before, _after, { pendingId = "" }) {
      return before.has(pendingId)
        ? { success: `order ${pendingId} is in the list, id exact` }
        : {
            failure: `order ${pendingId} is not in the list (an id rounded through a double would look like this)`,
            success: "",
          };
    },
  },
  "other-orders-still-listed": {
    spec: "§4.1: the list returns every order placed; §4.2: a cancel concerns one order",
    compare: (context) => [context.initial, context.final],
    judge(before, after, { pendingId, raceId }) {
      const gone = [...before.keys()].filter((id) => id !== pendingId && id !== raceId && !after.has(id));
      return gone.length === 0
        ? { success: "every other order is still listed after the cancel" }
        : {
            failure: `orders other than ${pendingId} vanished after the cancel: ${gone.slice(0, 10).join(", ")}`,
            success: "",
          };
    },
  },
};

/** The list readings a rule compares, earlier first: the ends of its reproduction. */
export function ruleSnapshots(name: RuleName, context: RuleContext): Array<ListSnapshot | undefined> {
  return RULES[name].compare(context);
}

export function checkRule(name: RuleName, scenarioId: string, context: RuleContext): CheckResult {
  const rule = RULES[name];
  const id = `${scenarioId}.${name}`;
  const [before, after] = rule.compare(context);
  for (const snapshot of [before, after]) {
    if (!snapshot?.orders) {
      const problem = snapshot ? snapshot.problem : "the list was not read";
      return {
        id,
        status: "failed",
        message: `cannot check: listing the orders failed (${problem})`,
        spec: rule.spec,
        ...(snapshot ? { request: snapshot.exchange.request } : {}),
        ...(snapshot?.exchange.response ? { response: recordResponse(snapshot.exchange.response) } : {}),
      };
    }
  }
  const verdict = rule.judge(before?.orders ?? new Map(), after?.orders ?? new Map(), context);
  if (verdict.failure === undefined)
    return { id, status: "passed", message: verdict.success, spec: rule.spec };
  return {
    id,
    status: "failed",
    message: verdict.failure,
    spec: rule.spec,
    ...(after ? { request: after.exchange.request } : {}),
    ...(after?.exchange.response ? { response: recordResponse(after.exchange.response) } : {}),
  };
}

function differences(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [id, record] of before) {
    const now = after.get(id);
    if (now === undefined) changes.push(`order ${id} vanished`);
    else if (now !== record) changes.push(`order ${id} was ${record}, now ${now}`);
  }
  for (const id of after.keys()) if (!before.has(id)) changes.push(`order ${id} appeared`);
  return changes;
}
