/**
 * Orders whose story the live history forgot (for its budget, or once it was flagged), per view, each with
 * the instant after which its forgotten cancels can no longer take effect: a list begun before it may show
 * the order as it was before them, so it cannot start the order's next story. Past its share of the budget
 * a view keeps one instant for all its orders, and past that again one instant holds for every view.
 */

/** What one order's entry costs beside its id, and one view's record beside its key. */
const ENTRY_BYTES = 48;
const VIEW_BYTES = 96;

interface ViewForgotten {
  orders: Map<string, number>;
  /** Every order of the view counts as forgotten until this instant. */
  allUntil: number;
  bytes: number;
}

export class ForgottenStories {
  readonly #byView = new Map<string, ViewForgotten>();
  /** Every order of every view counts as forgotten until this instant. */
  #allUntil = Number.NEGATIVE_INFINITY;
  bytes = 0;

  constructor(
    private readonly share: number,
    /** Told what the record takes (positive) or gives back (negative), to charge the budget. */
    private readonly charge: (bytes: number) => void,
  ) {}

  /** An order's story was forgotten; its cancels may take effect until `settledAt` (infinite when undecided). */
  forgot(view: string, orderId: string, settledAt: number): void {
    let record = this.#byView.get(view);
    if (!record) {
      record = { orders: new Map(), allUntil: Number.NEGATIVE_INFINITY, bytes: 0 };
      this.#byView.set(view, record);
      this.#take(record, VIEW_BYTES + view.length * 2);
    }
    const was = record.orders.get(orderId);
    if (was === undefined) this.#take(record, ENTRY_BYTES + orderId.length * 2);
    record.orders.set(orderId, Math.max(was ?? settledAt, settledAt));
    if (this.bytes > this.share) this.#collapse(record);
    if (this.bytes > this.share) this.#collapseAll();
  }

  /**
   * Until when the cancels of the order's forgotten stories may take effect: an operation begun after it
   * sees the order as they left it. Minus infinity for an order never forgotten.
   */
  until(view: string, orderId: string): number {
    const record = this.#byView.get(view);
    const ownUntil = record?.orders.get(orderId) ?? Number.NEGATIVE_INFINITY;
    return Math.max(this.#allUntil, record?.allUntil ?? Number.NEGATIVE_INFINITY, ownUntil);
  }

  /** The order's story begins again, without the lists its forgotten cancels make unreliable. */
  begun(view: string, orderId: string): void {
    const record = this.#byView.get(view);
    if (!record?.orders.delete(orderId)) return;
    this.#take(record, -(ENTRY_BYTES + orderId.length * 2));
  }

  /** Forgets the entries of every view, keeping one instant for all: what is left when the budget is short. */
  forgetEntries(): void {
    if (this.#byView.size > 0) this.#collapseAll();
  }

  /** The view's orders collapse into one instant for all of them. */
  #collapse(record: ViewForgotten): void {
    for (const [orderId, settledAt] of record.orders) {
      record.allUntil = Math.max(record.allUntil, settledAt);
      this.#take(record, -(ENTRY_BYTES + orderId.length * 2));
    }
    record.orders.clear();
  }

  #collapseAll(): void {
    for (const record of this.#byView.values()) {
      this.#collapse(record);
      this.#allUntil = Math.max(this.#allUntil, record.allUntil);
      this.#take(record, -record.bytes);
    }
    this.#byView.clear();
  }

  #take(record: ViewForgotten, bytes: number): void {
    record.bytes += bytes;
    this.bytes += bytes;
    this.charge(bytes);
  }
}
