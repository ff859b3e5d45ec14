import { recordResponse } from "../judging/exchange.ts";
import type { OrderIndex } from "../judging/order-index.ts";
import { rulesJudgedBy } from "../model/state-rule-catalogue.ts";
import type { CheckResult } from "../reports/report.ts";
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
  /** The snapshots the rule compares, earlier first. */
  compare(context: RuleContext): [ListSnapshot | undefined, ListSnapshot | undefined];
  /**
   * Holds when nothing changed that should not have: over a list with orders that have no int64 id, a pass
   * says nothing of those, so it is not judged whole; a failure among the others is a failure all the same.
   */
  wholeList?: true;
  /**
   * A failure message, or undefined when the rule holds; also told the message for success. `unsure`: the
   * failure is an order not found by id, which over a list with orders that have no int64 id may be one of
   * those. `notJudged`: why the rule cannot be judged, when another rule reports the cause.
   */
  judge(
    before: ListSnapshot,
    after: ListSnapshot,
    context: RuleContext,
  ): { failure?: string; success: string; unsure?: true; notJudged?: string };
}

const SPEC = rulesJudgedBy("suite");

const RULES: Record<RuleName, Rule> = {
  "refusals-change-nothing": {
    compare: (context) => [context.initial, context.afterRefused],
    wholeList: true,
    judge(before, after) {
      const changed = differences(before, after);
      return changed === undefined
        ? { success: "the list is the same before and after the refused requests" }
        : { failure: `the list changed after requests refused with 401: ${changed}`, success: "" };
    },
  },
  "list-ignores-paging-parameters": {
    compare: (context) => [context.initial, context.scenarioList],
    wholeList: true,
    judge(before, after) {
      const { vanished } = indexOf(before).differences(indexOf(after), 5);
      return vanished.count === 0
        ? { success: `all ${indexOf(before).size} orders listed with paging and filter parameters too` }
        : {
            failure: `with limit/offset/page/status parameters ${vanished.count} of ${indexOf(before).size} orders are missing (e.g. ${vanished.ids.join(", ")})`,
            success: "",
          };
    },
  },
  "shipped-order-unchanged": {
    // From the list read just before the cancels: what refused requests did is their own rule's to report.
    compare: (context) => [context.afterRefused, context.final],
    judge(before, after, { initial, shippedId = "" }) {
      if (!indexOf(before).has(shippedId)) {
        if (initial.orders?.has(shippedId))
          return {
            notJudged: `order ${shippedId} was gone before the cancels, after the requests refused with 401 (refusals-change-nothing reports it)`,
            success: "",
          };
        return { failure: `order ${shippedId} is not in the first list`, success: "", unsure: true };
      }
      if (!indexOf(after).has(shippedId))
        return { failure: `order ${shippedId} disappeared from the list after its 409`, success: "" };
      return indexOf(before).sameIn(indexOf(after), shippedId)
        ? { success: `order ${shippedId} is listed unchanged after its 409s` }
        : {
            failure: `order ${shippedId} changed after a 409: was ${before.records?.get(shippedId)}, now ${after.records?.get(shippedId)}`,
            success: "",
          };
    },
  },
  "pending-order-listed": {
    compare: (context) => [context.initial, context.initial],
    judge(before, _after, { pendingId = "" }) {
      return indexOf(before).has(pendingId)
        ? { success: `order ${pendingId} is in the list, id exact` }
        : {
            failure: `order ${pendingId} is not in the list (an id rounded through a double would look like this)`,
            success: "",
            unsure: true,
          };
    },
  },
  "listed-orders-stay": {
    compare: (context) => [context.afterRefused, context.final],
    wholeList: true,
    judge(before, after, { pendingId, raceId }) {
      const ignore = new Set([pendingId, raceId].filter((id): id is string => id !== undefined));
      const { vanished } = indexOf(before).differences(indexOf(after), 10, ignore);
      return vanished.count === 0
        ? { success: "every other order is still listed after the cancel" }
        : {
            failure: `orders other than ${pendingId} vanished after the cancel: ${vanished.ids.join(", ")}${vanished.count > vanished.ids.length ? ` (${vanished.count} in all)` : ""}`,
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
  const spec = SPEC[name];
  const id = `${scenarioId}.${name}`;
  const [before, after] = rule.compare(context);
  const { initial } = context;
  const notKept = [initial, before, after].find((snapshot) => snapshot?.notKept !== undefined)?.notKept;
  if (notKept !== undefined) return { id, status: "skipped", message: `not judged: ${notKept}`, spec };
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

function indexOf(snapshot: ListSnapshot): OrderIndex {
  return snapshot.orders as OrderIndex;
}

/** What changed between two lists, the first few of each kind by id and every one counted; undefined when nothing did. */
function differences(before: ListSnapshot, after: ListSnapshot): string | undefined {
  const found = indexOf(before).differences(indexOf(after), 5);
  const parts: string[] = [];
  const describe = (kind: "vanished" | "changed" | "appeared", text: (id: string) => string) => {
    const { count, ids } = found[kind];
    if (count === 0) return;
    parts.push(ids.map(text).join("; ") + (count > ids.length ? ` (${count} orders ${kind} in all)` : ""));
  };
  describe("vanished", (id) => `order ${id} vanished`);
  describe("changed", (id) => {
    const was = before.records?.get(id);
    const now = after.records?.get(id);
    return was !== undefined && now !== undefined
      ? `order ${id} was ${was}, now ${now}`
      : `order ${id} changed`;
  });
  describe("appeared", (id) => `order ${id} appeared`);
  return parts.length === 0 ? undefined : parts.join("; ");
}

/** "1 listed order has" / "3 listed orders have". */
export function ordersHave(count: number): string {
  return count === 1 ? "1 listed order has" : `${count} listed orders have`;
}
