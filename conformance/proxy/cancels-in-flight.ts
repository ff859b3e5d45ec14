import { isCancelOperation, orderIdSegment } from "../judging/operation-traits.ts";
import type { Exchange, ExchangeTap } from "./exchange-lifecycle.ts";
import { int64Id } from "./expectation.ts";
import { isWriteOutsideContract, WRITE_OUTSIDE_CONTRACT_IN_FLIGHT } from "./state-rules/barrier.ts";
import { NO_NOT_ORDERS_PATHS, type NotOrdersPaths } from "./state-rules/not-orders-paths.ts";

/**
 * Cancels sent on to the upstream and not yet answered, by the order's exact id: the state rules ask
 * whether an order's cancel is still in flight before they judge what a list says of it. Writes the
 * contract has no operation for are counted under WRITE_OUTSIDE_CONTRACT_IN_FLIGHT: one on its way may
 * change any order before an exchange answered meanwhile was handled (state-rules/barrier.ts), but for
 * those under the paths `notOrders` names, which touch no order.
 */
export class CancelsInFlight {
  readonly #count = new Map<string, number>();

  constructor(readonly notOrders: NotOrdersPaths = NO_NOT_ORDERS_PATHS) {}

  began(orderId: string): void {
    this.#count.set(orderId, (this.#count.get(orderId) ?? 0) + 1);
  }

  ended(orderId: string): void {
    const left = (this.#count.get(orderId) ?? 1) - 1;
    if (left === 0) this.#count.delete(orderId);
    else this.#count.set(orderId, left);
  }

  has(orderId: string): boolean {
    return this.#count.has(orderId);
  }
}

/**
 * Counts an exchange's cancel among those in flight, from its request until it is over: whatever spelling
 * of the cancel's path the edge routed, since one the upstream serves may take effect before it answers.
 * A write outside the contract is counted the same way, under its own key.
 */
export class CancelTap implements ExchangeTap {
  /** The order id its cancel is counted under, or the key of writes outside the contract. */
  #key: string | undefined;

  constructor(readonly cancels: CancelsInFlight) {}

  onRequest(exchange: Exchange): void {
    const { routed } = exchange;
    if (isWriteOutsideContract(exchange.method, routed)) {
      if (this.cancels.notOrders.covers(exchange.url)) return;
      this.#key = WRITE_OUTSIDE_CONTRACT_IN_FLIGHT;
      this.cancels.began(this.#key);
      return;
    }
    if (!routed || !isCancelOperation(routed.operation)) return;
    // Keyed as the state rules name the order: its exact digits, however the path spelled them.
    const segment = orderIdSegment(routed.operation, routed.params);
    this.#key = segment === undefined ? undefined : int64Id(segment);
    if (this.#key !== undefined) this.cancels.began(this.#key);
  }

  /** Ended before the outcome is handed on to be judged; once, though the outcome may be built twice. */
  onFinish(): void {
    if (this.#key === undefined) return;
    this.cancels.ended(this.#key);
    this.#key = undefined;
  }
}
