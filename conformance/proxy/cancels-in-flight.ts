import type { Routed } from "../../contract/operations.ts";
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
  /** When each one in flight was sent (ms from the proxy's start), by key: the earliest first. */
  readonly #sentAt = new Map<string, number[]>();

  constructor(readonly notOrders: NotOrdersPaths = NO_NOT_ORDERS_PATHS) {}

  began(orderId: string, at: number): void {
    const sent = this.#sentAt.get(orderId);
    if (sent === undefined) this.#sentAt.set(orderId, [at]);
    else sent.push(at);
  }

  ended(orderId: string, at: number): void {
    const sent = this.#sentAt.get(orderId);
    if (sent === undefined) return;
    const index = sent.indexOf(at);
    sent.splice(index === -1 ? 0 : index, 1);
    if (sent.length === 0) this.#sentAt.delete(orderId);
  }

  /**
   * Whether one is in flight that was sent before `instant`: it may have been carried out before an
   * exchange over at `instant` was. One sent after that exchange was over cannot have been, however late
   * that exchange's verdict comes.
   */
  sentBefore(orderId: string, instant: number): boolean {
    const sent = this.#sentAt.get(orderId);
    return sent?.some((at) => at < instant) === true;
  }
}

/**
 * Counts an exchange's cancel among those in flight, from its request until it is over: whatever spelling
 * of the cancel's path the edge routed, since one the upstream serves may take effect before it answers.
 * A write outside the contract is counted the same way, under its own key. A request with a method
 * override is counted as each method it may have been served as (method-override.ts).
 */
export class CancelTap implements ExchangeTap {
  /** The order ids its cancels are counted under, and the key of writes outside the contract. */
  #keys: string[] = [];
  #sentAt = 0;

  constructor(readonly cancels: CancelsInFlight) {}

  onRequest(exchange: Exchange): void {
    this.#sentAt = exchange.startedAt;
    this.#count(exchange.url, exchange.method, exchange.routed);
    for (const { method, routed } of exchange.overridden) this.#count(exchange.url, method, routed);
  }

  #count(url: string, method: string, routed: Routed | undefined): void {
    const key = keyOf(this.cancels.notOrders, url, method, routed);
    if (key === undefined || this.#keys.includes(key)) return;
    this.#keys.push(key);
    this.cancels.began(key, this.#sentAt);
  }

  /** Ended before the outcome is handed on to be judged; once, though the outcome may be built twice. */
  onFinish(): void {
    for (const key of this.#keys) this.cancels.ended(key, this.#sentAt);
    this.#keys = [];
  }
}

/** What a request as `method` is counted under while in flight: its cancel's order, or a write outside the contract. */
function keyOf(
  notOrders: NotOrdersPaths,
  url: string,
  method: string,
  routed: Routed | undefined,
): string | undefined {
  if (isWriteOutsideContract(method, routed))
    return notOrders.covers(url) ? undefined : WRITE_OUTSIDE_CONTRACT_IN_FLIGHT;
  if (!routed || !isCancelOperation(routed.operation)) return undefined;
  // Keyed as the state rules name the order: its exact digits, however the path spelled them.
  const segment = orderIdSegment(routed.operation, routed.params);
  return segment === undefined ? undefined : int64Id(segment);
}
