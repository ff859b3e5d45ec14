import { HOLDS, type TrafficRule } from "./traffic-rule.ts";

/**
 * Every list after an earlier one of its view tests the rule; an order that vanished between them breaks it,
 * unless a cancel or a refusal explains it (the refusal is refusals-change-nothing's to report).
 */
export const listedOrdersStay: TrafficRule<"listed-orders-stay"> = {
  name: "listed-orders-stay",
  onList: () => HOLDS,
  onOrderChange({ kind, id, earlier, later, order, refusedBetween, cancelInFlight }) {
    if (kind !== "vanished") return undefined;
    if (order?.cancelled || order?.undecided || cancelInFlight()) {
      const cancel = order?.cancelled
        ? `was cancelled (${order.cancelled.label})`
        : order?.undecided
          ? `may have been cancelled (${order.undecided.label})`
          : "was cancelled (a cancel still in flight)";
      return {
        note: "cancelled-not-listed",
        message: `order ${id} ${cancel} and is not in the later list ${later.label}: the spec does not say whether cancelled orders stay listed, so this is not judged`,
      };
    }
    if (refusedBetween) return undefined;
    return {
      message: `order ${id}, listed by ${earlier.label}, is missing from ${later.label}, and no cancel of it went through the proxy in between`,
      earlier,
      later,
    };
  },
};
