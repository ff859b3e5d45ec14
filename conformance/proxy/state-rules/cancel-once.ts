import { HOLDS, type TrafficRule } from "./traffic-rule.ts";

/** Only a pending order can be cancelled, so a second 204 for one order breaks the rule. */
export const cancelOnce: TrafficRule<"cancel-once"> = {
  name: "cancel-once",
  onCancel({ orderId, outcome, at, order }) {
    if (outcome !== "cancelled") return undefined;
    if (!order.cancelled) return HOLDS;
    return {
      message: `order ${orderId} was cancelled twice: ${at.label} after ${order.cancelled.label}`,
      earlier: order.cancelled,
      later: at,
    };
  },
};
