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

export function createSeed(orders: readonly SeedOrder[]): Seed {
  const stored = orders.map(storedOrder);
  const indexByKey = new Map<string, number>();
  for (let index = 0; index < stored.length; index++) {
    const { key } = stored[index] as StoredOrder;
    if (indexByKey.has(key)) throw new Error(`duplicate order id ${key}`);
    indexByKey.set(key, index);
  }
  return { orders: stored, indexByKey, listBody: encodeList(stored) };
}

export function encodeList(orders: Iterable<StoredOrder>): Uint8Array {
  let body = "[";
  for (const order of orders) body += body.length === 1 ? order.json : `,${order.json}`;
  return encoder.encode(`${body}]`);
}
