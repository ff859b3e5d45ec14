import { exchangeWords, WHAT_HAPPENED } from "./finding-words.ts";
import { endedBefore, HOLDS, type TrafficRule } from "./traffic-rule.ts";

/**
 * A 409 says the order is not pending, so a 204 for it after that answer was over breaks the rule. An order
 * cancelled twice is cancel-once's to report, and a 409 answered while the 204 was in flight proves nothing.
 */
export const noCancelAfterConflict: TrafficRule<"no-cancel-after-conflict"> = {
  name: "no-cancel-after-conflict",
  onCancel({ orderId, outcome, at, order }) {
    if (outcome !== "cancelled") return undefined;
    if (order.cancelled || !order.conflicted || !endedBefore(order.conflicted, at)) return HOLDS;
    return {
      message: `order ${orderId} ${WHAT_HAPPENED["no-cancel-after-conflict"]}: ${exchangeWords(order.conflicted)}, ${exchangeWords(at)}`,
      earlier: order.conflicted,
      later: at,
    };
  },
};
