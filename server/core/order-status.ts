/**
 * The internal life cycle of an order. The spec names `pending` and `shipped`; it does not name the state a
 * cancel leads to, so `cancelled` is this mock's name for it.
 */
export const ORDER_STATUSES = ["pending", "shipped", "cancelled"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export type CancelOutcome = "cancelled" | "not_cancellable" | "not_found";

/** The spec's cancel rule: only a pending order can be cancelled; any other status is left unchanged. */
export function cancelTransition(status: OrderStatus): { outcome: CancelOutcome; next: OrderStatus } {
  return status === "pending"
    ? { outcome: "cancelled", next: "cancelled" }
    : { outcome: "not_cancellable", next: status };
}
