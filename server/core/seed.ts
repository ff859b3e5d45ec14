import { type SeedOrder, type StoredOrder, storedOrder } from "./order-record.ts";

/**
 * The orders of a fixture as every world starts from them. A seed is never changed: worlds keep their
 * differences beside it, so a thousand worlds over one seed share its orders and its list body.
 */
export interface Seed {
  readonly orders: readonly StoredOrder[];
  readonly indexByKey: ReadonlyMap<string, number>;
  /** The listOrders body of an unchanged world. */
  readonly listBody: Uint8Array;
}

const encoder = new TextEncoder();
// The list body is encoded in pieces of about this many characters, so no text of the whole list is ever made.
const PIECE_CHARS = 1 << 20;

/**
 * A seed made one order at a time, as a fixture file streams in: each order is stored and its JSON added
 * to the list body as it comes, so a million orders never wait for one another.
 */
export class SeedBuilder {
  readonly #orders: StoredOrder[] = [];
  readonly #indexByKey: Map<string, number>;
  readonly #indexed: boolean;

  /**
   * `indexByKey`: an index the caller fills as it adds (each id's digits → its place), so that a reader that
   * keeps one to find duplicates need not have it made twice.
   */
  constructor(indexByKey?: Map<string, number>) {
    this.#indexByKey = indexByKey ?? new Map();
    this.#indexed = indexByKey !== undefined;
  }
  readonly #pieces: Uint8Array[] = [];
  #pending = "[";

  /** `key`: the id's digits, when the caller has them. */
  add(order: SeedOrder, key?: string): void {
    const stored = storedOrder(order, key);
    if (!this.#indexed) {
      if (this.#indexByKey.has(stored.key)) throw new Error(`duplicate order id ${stored.key}`);
      this.#indexByKey.set(stored.key, this.#orders.length);
    }
    this.#pending += this.#orders.length === 0 ? stored.json : `,${stored.json}`;
    this.#orders.push(stored);
    if (this.#pending.length >= PIECE_CHARS) {
      this.#pieces.push(encoder.encode(this.#pending));
      this.#pending = "";
    }
  }

  finish(): Seed {
    this.#pieces.push(encoder.encode(`${this.#pending}]`));
    this.#pending = "";
    return { orders: this.#orders, indexByKey: this.#indexByKey, listBody: joinPieces(this.#pieces) };
  }
}

export function createSeed(orders: readonly SeedOrder[]): Seed {
  const builder = new SeedBuilder();
  for (const order of orders) builder.add(order);
  return builder.finish();
}

export function encodeList(orders: Iterable<StoredOrder>): Uint8Array {
  let body = "[";
  for (const order of orders) body += body.length === 1 ? order.json : `,${order.json}`;
  return encoder.encode(`${body}]`);
}

function joinPieces(pieces: readonly Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0] as Uint8Array;
  let length = 0;
  for (const piece of pieces) length += piece.length;
  const joined = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    joined.set(piece, at);
    at += piece.length;
  }
  return joined;
}
