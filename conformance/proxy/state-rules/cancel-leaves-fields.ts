import { HOLDS, type TrafficRule } from "./traffic-rule.ts";

/** Each order cancelled between two lists and listed by the later one tests the rule; a changed record breaks it. */
export const cancelLeavesFields: TrafficRule<"cancel-leaves-fields"> = {
  name: "cancel-leaves-fields",
  onOrderTouchedBetween: ({ cancelledBetween, inLater }) => (cancelledBetween && inLater ? HOLDS : undefined),
  onOrderChange({ kind, id, later, cancelledBetween, records }) {
    if (kind !== "changed" || !cancelledBetween) return undefined;
    return {
      message: `order ${id} changed when ${cancelledBetween.label} cancelled it: ${records()}`,
      earlier: cancelledBetween,
      later,
    };
  },
};
