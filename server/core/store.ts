import type { PiecedBody } from "./exchange.ts";
import { type ListPieces, listPieces } from "./list-pieces.ts";
import { type OrderPlaces, type OrdersPage, type OrdersQuery, pageOf } from "./order-page.ts";
import { orderKey, type SeedOrder, type StoredOrder, storedOrder, withStatusJson } from "./order-record.ts";
import { type CancelOutcome, cancelTransition, type OrderStatus } from "./order-status.ts";
import type { Seed } from "./seed.ts";

/**
 * The orders of one world: a seed plus what this world changed. It costs memory in proportion to its
 * changes; until an order is added, replaced or removed, its list body is the seed's own bytes.
 */
export interface Store {
  /**
   * The listOrders body: every order in list order, as a JSON array of Order records. The seed's own
   * bytes while the world changed no record; else pieces, mostly views of them (see list-pieces.ts).
   */
  listBody(): Uint8Array | PiecedBody;
  cancel(id: bigint): CancelOutcome;
  statusOf(id: bigint): OrderStatus | undefined;
  readonly size: number;
  /** What this world holds beyond the seed it shares, about: its changed and added orders, its own list body. */
  readonly heldBytes: number;
  /** How many orders differ from the seed (changed, added or removed). */
  readonly changes: number;
  /**
   * A page of orders with their statuses, in list order, found without walking the world before it;
   * undefined when the query's `after` is an id this world's list never held.
   */
  controlPage(query: OrdersQuery): OrdersPage | undefined;
  /** One order with its status as control JSON, or undefined when there is no such order. */
  controlOrderJson(id: bigint): string | undefined;
  setStatus(id: bigint, status: OrderStatus): boolean;
  /** Replaces the order with this id in place, or appends it. */
  putOrder(order: SeedOrder): "created" | "replaced";
  removeOrder(id: bigint): boolean;
  /** Forgets every change and starts again from a seed (the same or a newly loaded one). */
  reset(seed: Seed): void;
  /**
   * What differs from the seed, for a state file: seed orders removed from their place, then the orders to
   * put back over the seed in this order (changed seed orders in place, added ones appended).
   */
  differences(): { removed: string[]; orders: StoredOrder[] };
}

export function createStore(initialSeed: Seed): Store {
  let seed = initialSeed;
  // Seed orders this world changed, by their place in the seed; null marks one it removed.
  const changed = new Map<number, StoredOrder | null>();
  // Orders this world created, in the order they were appended.
  const added = new Map<string, StoredOrder>();
  // Every id this world ever added, in the order it was added (one place each time), and its latest place
  // among them: a removed order keeps its place, so that a control page after its id still finds where to go on.
  const addedKeys: string[] = [];
  const addedPlace = new Map<string, number>();
  let removedCount = 0;
  // Seed orders whose record (not only status) differs; while zero and nothing is added, the seed's body serves.
  let rewritten = 0;
  // Otherwise the world's own list, made at the first list after a change to what the list shows: a status
  // is not part of it, so cancels keep it.
  let ownList: ListPieces | undefined;

  const find = (key: string): StoredOrder | undefined => {
    const own = added.get(key);
    if (own) return own;
    const place = seed.placeOf(key);
    if (place === undefined) return undefined;
    const change = changed.get(place);
    if (change !== undefined) return change ?? undefined;
    return seed.orderAt(place, key);
  };

  // What the changed and added orders hold, about (heldBytes): a world costs what it changed.
  let ordersBytes = 0;
  const changeSeedOrder = (key: string, next: StoredOrder | null) => {
    const place = seed.placeOf(key) as number;
    const original = seed.orderAt(place, key);
    const before = changed.get(place);
    if (before === null) removedCount--;
    if (before !== undefined && before?.json !== original.json) rewritten--;
    if (next === null) removedCount++;
    if (next?.json !== original.json) rewritten++;
    if (before !== undefined) ordersBytes -= entryBytes(key, before);
    ordersBytes += entryBytes(key, next);
    changed.set(place, next);
  };

  const addOrder = (order: StoredOrder) => {
    const before = added.get(order.key);
    if (before) ordersBytes -= entryBytes(order.key, before);
    else {
      addedPlace.set(order.key, addedKeys.length);
      addedKeys.push(order.key);
      ordersBytes += placeBytes(order.key);
    }
    ordersBytes += entryBytes(order.key, order);
    added.set(order.key, order);
  };

  const replace = (order: StoredOrder) => {
    if (added.has(order.key)) addOrder(order);
    else changeSeedOrder(order.key, order);
  };

  // The list as places (order-page.ts): the seed's, each as the world changed it, then one per addition.
  const places = (): OrderPlaces => {
    const seedSize = seed.size;
    const addedAt = (place: number) => {
      const key = addedKeys[place - seedSize] as string;
      return addedPlace.get(key) === place - seedSize ? added.get(key) : undefined;
    };
    return {
      length: seedSize + addedKeys.length,
      total: seedSize - removedCount + added.size,
      orderAt(place) {
        if (place >= seedSize) return addedAt(place);
        const change = changed.get(place);
        return change === undefined ? seed.orderAt(place) : (change ?? undefined);
      },
      statusAt(place) {
        if (place >= seedSize) return addedAt(place)?.status;
        const change = changed.get(place);
        return change === undefined ? seed.statusAt(place) : change?.status;
      },
      keyAt(place) {
        return place >= seedSize ? (addedKeys[place - seedSize] as string) : seed.orderAt(place).key;
      },
      placeOf(key) {
        const own = addedPlace.get(key);
        return own === undefined ? seed.placeOf(key) : seedSize + own;
      },
    };
  };

  return {
    get size() {
      return seed.size - removedCount + added.size;
    },
    get heldBytes() {
      return ordersBytes + (ownList?.ownBytes ?? 0);
    },
    get changes() {
      return changed.size + added.size;
    },
    listBody() {
      if (rewritten === 0 && added.size === 0) return seed.listBody;
      ownList ??= listPieces(seed, changed, added.values());
      return ownList;
    },
    cancel(id) {
      const order = find(orderKey(id));
      if (!order) return "not_found";
      const { outcome, next } = cancelTransition(order.status);
      if (next !== order.status) replace({ ...order, status: next });
      return outcome;
    },
    statusOf(id) {
      return find(orderKey(id))?.status;
    },
    controlPage(query) {
      return pageOf(places(), query);
    },
    controlOrderJson(id) {
      const order = find(orderKey(id));
      return order && withStatusJson(order);
    },
    setStatus(id, status) {
      const order = find(orderKey(id));
      if (!order) return false;
      if (order.status !== status) replace({ ...order, status });
      return true;
    },
    putOrder(seedOrder) {
      const order = storedOrder(seedOrder);
      ownList = undefined;
      if (find(order.key)) {
        replace(order);
        return "replaced";
      }
      addOrder(order);
      return "created";
    },
    removeOrder(id) {
      const key = orderKey(id);
      ownList = undefined;
      const own = added.get(key);
      if (own) {
        ordersBytes -= entryBytes(key, own);
        added.delete(key);
        return true;
      }
      if (!find(key)) return false;
      changeSeedOrder(key, null);
      return true;
    },
    differences() {
      const removed: string[] = [];
      const orders: StoredOrder[] = [];
      for (const [place, change] of changed) {
        if (change === null) removed.push(seed.orderAt(place).key);
        else orders.push(change);
      }
      orders.push(...added.values());
      return { removed, orders };
    },
    reset(next) {
      seed = next;
      ownList = undefined;
      changed.clear();
      added.clear();
      addedKeys.length = 0;
      addedPlace.clear();
      ordersBytes = 0;
      removedCount = 0;
      rewritten = 0;
    },
  };
}

/** What one changed, removed or added order costs a world, about: its key and JSON as strings, the entry. */
function entryBytes(key: string, order: StoredOrder | null): number {
  return 2 * (key.length + (order?.json.length ?? 0)) + ENTRY_OVERHEAD_BYTES;
}

/** What an added id's place costs a world, about, kept after the order is removed: the key and two entries. */
function placeBytes(key: string): number {
  return 2 * key.length + PLACE_OVERHEAD_BYTES;
}

const ENTRY_OVERHEAD_BYTES = 120;
const PLACE_OVERHEAD_BYTES = 80;
