import { exchangeWords, WHAT_HAPPENED } from "./finding-words.ts";
import { HOLDS, type TrafficRule } from "./traffic-rule.ts";

/** Only a pending order can be cancelled, so a second 204 for one order breaks the rule. */
export const cancelOnce: TrafficRule<"cancel-once"> = {
  name: "cancel-once",
  onCancel({ orderId, outcome, at, order }) {
    if (outcome !== "cancelled") return undefined;
    if (!order.cancelled) return HOLDS;
    return {
      message: `order ${orderId} ${WHAT_HAPPENED["cancel-once"]}: ${exchangeWords(order.cancelled)}, ${exchangeWords(at)}`,
      earlier: order.cancelled,
      later: at,
    };
  },
};
