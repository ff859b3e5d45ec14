import type { OrderIndex } from "../judging/order-index.ts";
import type { RuleName } from "./scenarios.ts";
import type { ListSnapshot } from "./snapshot.ts";

/**
 * The state rules the suite judges, one object each: which of the list snapshots kept around the scenarios
 * a rule compares, and what it makes of them. rules.ts judges every rule the same way around them (lists
 * not kept or not read, orders without an int64 id).
 */

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
  /** The status each of the scenario's own steps was answered with, in order; null for none. */
  scenarioAnswers?: ReadonlyArray<number | null>;
}

/** A state rule as the suite judges it: from the snapshots of the list its scenarios keep. */
export interface SuiteStateRule<Name extends RuleName = RuleName> {
  readonly name: Name;
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

/**
 * Every rule the catalogue gives the suite to judge, one object each: a rule added to the catalogue for the
 * suite does not compile until its object is here. rules.ts judges them.
 */
export const SUITE_STATE_RULES: { readonly [Name in RuleName]: SuiteStateRule<Name> } = {
  "refusals-change-nothing": {
    name: "refusals-change-nothing",
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
    name: "list-ignores-paging-parameters",
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
    name: "shipped-order-unchanged",
    // From the list read just before the cancels: what refused requests did is their own rule's to report.
    compare: (context) => [context.afterRefused, context.final],
    judge(before, after, { initial, shippedId = "", scenarioAnswers = [] }) {
      if (!indexOf(before).has(shippedId)) {
        if (initial.orders?.has(shippedId))
          return {
            notJudged: `order ${shippedId} was gone before the cancels, after the requests refused with 401 (refusals-change-nothing reports it)`,
            success: "",
          };
        return { failure: `order ${shippedId} is not in the first list`, success: "", unsure: true };
      }
      if (!indexOf(after).has(shippedId))
        return {
          failure: `order ${shippedId} is no longer listed after ${itsCancels(scenarioAnswers)}`,
          success: "",
        };
      return indexOf(before).sameIn(indexOf(after), shippedId)
        ? { success: `order ${shippedId} is listed unchanged after ${itsCancels(scenarioAnswers)}` }
        : {
            failure: `order ${shippedId} changed after ${itsCancels(scenarioAnswers)}: was ${before.records?.get(shippedId)}, now ${after.records?.get(shippedId)}`,
            success: "",
          };
    },
  },
  "pending-order-listed": {
    name: "pending-order-listed",
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
    name: "listed-orders-stay",
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

/** "its cancels, answered 204 and 204": what the order's cancels got, which the message must not assume. */
function itsCancels(answers: ReadonlyArray<number | null>): string {
  if (answers.length === 0) return "its cancels";
  const said = answers.map((status) => (status === null ? "no answer" : String(status)));
  const last = said.pop() as string;
  return `its cancels, answered ${said.length > 0 ? `${said.join(", ")} and ${last}` : last}`;
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
