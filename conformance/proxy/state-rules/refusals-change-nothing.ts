import { HOLDS, type TrafficRule } from "./traffic-rule.ts";

/**
 * Each listed order refused between two lists tests the rule; the later list breaks it when the order is
 * gone or changed, unless a cancel of it explains that (its own rules report those).
 */
export const refusalsChangeNothing: TrafficRule<"refusals-change-nothing"> = {
  name: "refusals-change-nothing",
  onOrderTouchedBetween: ({ refusedBetween, inEarlier }) => (refusedBetween && inEarlier ? HOLDS : undefined),
  onOrderChange({
    kind,
    id,
    earlier,
    later,
    order,
    cancelledBetween,
    refusedBetween,
    cancelInFlight,
    records,
  }) {
    if (!refusedBetween) return undefined;
    if (kind === "vanished") {
      if (order?.cancelled || order?.undecided || cancelInFlight()) return undefined;
      return {
        message: `order ${id} is missing from ${later.label} after the refused ${refusedBetween.label}; it was listed by ${earlier.label}`,
        earlier: refusedBetween,
        later,
      };
    }
    if (cancelledBetween) return undefined;
    return {
      message: `order ${id} changed after the refused ${refusedBetween.label}: ${records()}`,
      earlier: refusedBetween,
      later,
    };
  },
};
