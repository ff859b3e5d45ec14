/**
 * Cancels sent on to the upstream and not yet answered, by the order's exact id: the state rules ask
 * whether an order's cancel is still in flight before they judge what a list says of it.
 */
export class CancelsInFlight {
  readonly #count = new Map<string, number>();

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
