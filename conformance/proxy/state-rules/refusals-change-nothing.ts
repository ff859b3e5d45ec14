import { type ExchangeRef, HOLDS, type OrderChange, type TrafficRule } from "./traffic-rule.ts";

/**
 * Each listed order refused between two lists tests the rule; the later list breaks it when the order is
 * gone or changed, unless a cancel of it explains that (its own rules report those), or a shipping outside
 * the API explains the change (`shippedBetween`).
 */
export const refusalsChangeNothing: TrafficRule<"refusals-change-nothing"> = {
  name: "refusals-change-nothing",
  onOrderTouchedBetween: ({ refusedBetween, inEarlier }) => (refusedBetween && inEarlier ? HOLDS : undefined),
  onOrderChange(change) {
    const { kind, id, earlier, later, order, cancelledBetween, refusedBetween, cancelInFlight, records } =
      change;
    if (!refusedBetween) return undefined;
    if (kind === "vanished") {
      if (order?.cancelled || order?.undecided || cancelInFlight()) return undefined;
      return {
        message: `order ${id} is missing from ${later.label} after the refused ${refusedBetween.label}; it was listed by ${earlier.label}`,
        earlier: refusedBetween,
        later,
      };
    }
    if (cancelledBetween || shippedBetween(earlier, order)) return undefined;
    return {
      message: `order ${id} changed after the refused ${refusedBetween.label}: ${records()}`,
      earlier: refusedBetween,
      later,
    };
  },
};

/**
 * Whether the change may be the order's shipping (§3 rule 2: not shown; §2: `complete`, `shipDate`): a 409
 * shows the order left pending before it was answered, so once, after the earlier list began and before
 * the first 409 of it was answered, with no 204 of it seen (a cancelled order does not ship).
 */
function shippedBetween(earlier: ExchangeRef, order: OrderChange["order"]): boolean {
  const conflicted = order?.conflicted;
  return (
    order?.cancelled === undefined && conflicted !== undefined && earlier.startedAt <= conflicted.endedAt
  );
}
