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
  page(query: OrdersQuery): OrdersPage | undefined;
  /** One order with its status as control JSON, or undefined when there is no such order. */
  controlOrderJson(id: bigint): string | undefined;
  setStatus(id: bigint, status: OrderStatus): boolean;
  /**
   * Replaces the order with this id in place, or appends it; "full" (nothing done) when that would make
   * what the world's orders hold grow past `maxBytes`.
   */
  putOrder(order: SeedOrder, maxBytes?: number): PutOutcome;
  removeOrder(id: bigint): boolean;
  /**
   * Creates the orders whose id has no order here (the first of an id given twice), all or none: "full",
   * nothing done, when together they would make what the world's orders hold grow past `maxBytes`.
   * Returns the ids created.
   */
  createOrders(orders: readonly SeedOrder[], maxBytes?: number): string[] | "full";
  /** Forgets every change and starts again from a seed (the same or a newly loaded one). */
  reset(seed: Seed): void;
  /**
   * What differs from the seed, for a state file: seed orders removed from their place, then the orders to
   * put back over the seed in this order (changed seed orders in place, added ones appended).
   */
  differences(): { removed: string[]; orders: StoredOrder[] };
}

/** What a put did: "full" when the world would have grown past its room, so nothing was done. */
export type PutOutcome = "created" | "replaced" | "full";

export function createStore(seed: Seed): Store {
  return new SeedStore(seed);
}

/** A world's orders as the seed plus what this world changed, added or removed. */
class SeedStore implements Store {
  #seed: Seed;
  // Seed orders this world changed, by their place in the seed; null marks one it removed.
  readonly #changed = new Map<number, StoredOrder | null>();
  // Orders this world created, in the order they were appended.
  readonly #added = new Map<string, StoredOrder>();
  // The ids this world added, in the order they were added (one place each time), and each id's latest place
  // among them: a removed order keeps its place, so that a control page after its id still finds where to go
  // on, until tidying (below) lets it go. "" marks a place tidying emptied.
  readonly #addedKeys: string[] = [];
  readonly #addedPlace = new Map<string, number>();
  // Tidying, while it runs: places before `read` are looked at, kept ones moved down to before `write`.
  #tidy: { read: number; write: number } | undefined;
  #removedCount = 0;
  // Seed orders whose record (not only status) differs; while zero and nothing is added, the seed's body serves.
  #rewritten = 0;
  // Otherwise the world's own list, made at the first list after a change to what the list shows: a status
  // is not part of it, so cancels keep it.
  #ownList: ListPieces | undefined;
  // What the changed and added orders hold, about (heldBytes): a world costs what it changed. It counts the
  // bytes each one's JSON takes in the world's own list body too, reserved before the list is made.
  #ordersBytes = 0;
  // Of those, the bytes reserved for the list body: a list made is counted once, in them.
  #listedBytes = 0;

  constructor(seed: Seed) {
    this.#seed = seed;
  }

  get size(): number {
    return this.#seed.size - this.#removedCount + this.#added.size;
  }

  get heldBytes(): number {
    const ownList = this.#ownList?.ownBytes ?? 0;
    return this.#ordersBytes + Math.max(0, ownList - this.#listedBytes);
  }

  get changes(): number {
    return this.#changed.size + this.#added.size;
  }

  listBody(): Uint8Array | PiecedBody {
    if (this.#rewritten === 0 && this.#added.size === 0) return this.#seed.listBody;
    this.#ownList ??= listPieces(this.#seed, this.#changed, this.#added.values());
    return this.#ownList;
  }

  cancel(id: bigint): CancelOutcome {
    const order = this.#find(orderKey(id));
    if (!order) return "not_found";
    const { outcome, next } = cancelTransition(order.status);
    if (next !== order.status) this.#replace({ ...order, status: next });
    return outcome;
  }

  statusOf(id: bigint): OrderStatus | undefined {
    return this.#find(orderKey(id))?.status;
  }

  page(query: OrdersQuery): OrdersPage | undefined {
    return pageOf(this.#places(), query);
  }

  controlOrderJson(id: bigint): string | undefined {
    const order = this.#find(orderKey(id));
    return order && withStatusJson(order);
  }

  setStatus(id: bigint, status: OrderStatus): boolean {
    const order = this.#find(orderKey(id));
    if (!order) return false;
    if (order.status !== status) this.#replace({ ...order, status });
    return true;
  }

  putOrder(seedOrder: SeedOrder, maxBytes = Number.POSITIVE_INFINITY): PutOutcome {
    const order = storedOrder(seedOrder);
    this.#tidyStep();
    const before = this.#find(order.key);
    if (this.#ordersBytes + this.#growthOf(order, before) > maxBytes) return "full";
    this.#ownList = undefined;
    if (before) {
      this.#replace(order);
      return "replaced";
    }
    this.#addOrder(order);
    return "created";
  }

  createOrders(seedOrders: readonly SeedOrder[], maxBytes = Number.POSITIVE_INFINITY): string[] | "full" {
    const fresh = new Map<string, StoredOrder>();
    let growth = 0;
    for (const seedOrder of seedOrders) {
      const order = storedOrder(seedOrder);
      if (fresh.has(order.key) || this.#find(order.key)) continue;
      fresh.set(order.key, order);
      growth += this.#growthOf(order, undefined);
      // A step per order, as a put takes: what tidying lets go is not counted against the batch.
      this.#tidyStep();
    }
    if (this.#ordersBytes + growth > maxBytes) return "full";
    if (fresh.size > 0) this.#ownList = undefined;
    for (const order of fresh.values()) this.#addOrder(order);
    return [...fresh.keys()];
  }

  removeOrder(id: bigint): boolean {
    const key = orderKey(id);
    this.#ownList = undefined;
    this.#tidyStep();
    const own = this.#added.get(key);
    if (own) {
      this.#count(key, own, -1);
      this.#added.delete(key);
      return true;
    }
    if (!this.#find(key)) return false;
    this.#changeSeedOrder(key, null);
    return true;
  }

  differences(): { removed: string[]; orders: StoredOrder[] } {
    const removed: string[] = [];
    const orders: StoredOrder[] = [];
    for (const [place, change] of this.#changed) {
      if (change === null) removed.push(this.#seed.orderAt(place).key);
      else orders.push(change);
    }
    orders.push(...this.#added.values());
    return { removed, orders };
  }

  reset(next: Seed): void {
    this.#seed = next;
    this.#ownList = undefined;
    this.#changed.clear();
    this.#added.clear();
    this.#addedKeys.length = 0;
    this.#addedPlace.clear();
    this.#tidy = undefined;
    this.#ordersBytes = 0;
    this.#listedBytes = 0;
    this.#removedCount = 0;
    this.#rewritten = 0;
  }

  /** How much more the world's orders would hold with this one put in place of `before` (0 when not more). */
  #growthOf(order: StoredOrder, before: StoredOrder | undefined): number {
    const after = entryBytes(order.key, order) + listedBytes(order);
    if (!before) return after + placeBytes(order.key);
    const seedPlace = this.#added.has(order.key) ? undefined : this.#seed.placeOf(order.key);
    // A seed order not yet changed costs the world nothing until it is.
    const held =
      seedPlace !== undefined && !this.#changed.has(seedPlace)
        ? 0
        : entryBytes(order.key, before) + listedBytes(before);
    return Math.max(0, after - held);
  }

  #find(key: string): StoredOrder | undefined {
    const own = this.#added.get(key);
    if (own) return own;
    const place = this.#seed.placeOf(key);
    if (place === undefined) return undefined;
    const change = this.#changed.get(place);
    if (change !== undefined) return change ?? undefined;
    return this.#seed.orderAt(place, key);
  }

  #changeSeedOrder(key: string, next: StoredOrder | null): void {
    const place = this.#seed.placeOf(key) as number;
    const original = this.#seed.orderAt(place, key);
    const before = this.#changed.get(place);
    if (before === null) this.#removedCount--;
    if (before !== undefined && before?.json !== original.json) this.#rewritten--;
    if (next === null) this.#removedCount++;
    if (next?.json !== original.json) this.#rewritten++;
    if (before !== undefined) this.#count(key, before, -1);
    this.#count(key, next, 1);
    this.#changed.set(place, next);
  }

  #addOrder(order: StoredOrder): void {
    const before = this.#added.get(order.key);
    if (before) this.#count(order.key, before, -1);
    else {
      this.#addedPlace.set(order.key, this.#addedKeys.length);
      this.#addedKeys.push(order.key);
      this.#ordersBytes += placeBytes(order.key);
    }
    this.#count(order.key, order, 1);
    this.#added.set(order.key, order);
  }

  /** Counts an order in (1) or out (-1) of what the world holds, its list body's bytes with it. */
  #count(key: string, order: StoredOrder | null, sign: 1 | -1): void {
    const listed = listedBytes(order);
    this.#ordersBytes += sign * (entryBytes(key, order) + listed);
    this.#listedBytes += sign * listed;
  }

  /**
   * Places of removed orders, and of orders added again further on, are let go a few at a time: once they
   * outnumber the added orders (and TIDY_FLOOR), each write looks at TIDY_STEP places, moving the kept ones
   * down in their order. So the places stay within a bounded multiple of what the world holds, whatever
   * its history, and no write pays for the whole list. A removed id whose place is let go is forgotten.
   */
  #tidyStep(): void {
    const keys = this.#addedKeys;
    if (!this.#tidy) {
      if (keys.length - this.#added.size <= Math.max(TIDY_FLOOR, this.#added.size)) return;
      this.#tidy = { read: 0, write: 0 };
    }
    const tidy = this.#tidy;
    const stop = Math.min(keys.length, tidy.read + TIDY_STEP);
    for (; tidy.read < stop; tidy.read++) {
      const key = keys[tidy.read] as string;
      keys[tidy.read] = "";
      const latest = this.#addedPlace.get(key) === tidy.read;
      if (latest && this.#added.has(key)) {
        keys[tidy.write] = key;
        this.#addedPlace.set(key, tidy.write++);
        continue;
      }
      if (latest) this.#addedPlace.delete(key);
      if (key !== "") this.#ordersBytes -= placeBytes(key);
    }
    if (tidy.read < keys.length) return;
    keys.length = tidy.write;
    this.#tidy = undefined;
  }

  #replace(order: StoredOrder): void {
    if (this.#added.has(order.key)) this.#addOrder(order);
    else this.#changeSeedOrder(order.key, order);
  }

  // The list as places (order-page.ts): the seed's, each as the world changed it, then one per addition.
  #places(): OrderPlaces {
    const seed = this.#seed;
    const seedSize = seed.size;
    const [changed, added, addedKeys, addedPlace] = [
      this.#changed,
      this.#added,
      this.#addedKeys,
      this.#addedPlace,
    ];
    const addedAt = (place: number) => {
      const key = addedKeys[place - seedSize] as string;
      return addedPlace.get(key) === place - seedSize ? added.get(key) : undefined;
    };
    return {
      length: seedSize + addedKeys.length,
      total: seedSize - this.#removedCount + added.size,
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
  }
}

/** What one changed, removed or added order costs a world, about: its key and JSON as strings, the entry. */
function entryBytes(key: string, order: StoredOrder | null): number {
  return 2 * (key.length + (order?.json.length ?? 0)) + ENTRY_OVERHEAD_BYTES;
}

/**
 * What an order takes in the world's own list body, about: its JSON as UTF-8, and the views of the seed's
 * body around it (list-pieces.ts). Reserved with the order, so that a list made later fits in the room.
 */
function listedBytes(order: StoredOrder | null): number {
  return order === null ? 0 : utf8Length(order.json) + LISTED_OVERHEAD_BYTES;
}

function utf8Length(text: string): number {
  let bytes = text.length;
  for (let at = 0; at < text.length; at++) {
    const unit = text.charCodeAt(at);
    // A surrogate pair is two units and four bytes; any other unit past 0x7f takes two or three bytes.
    if (unit > 0x7f) bytes += unit > 0x7ff && (unit < 0xd800 || unit > 0xdfff) ? 2 : 1;
  }
  return bytes;
}

/** What an added id's place costs a world, about, kept after the order is removed until tidied: the key and two entries. */
function placeBytes(key: string): number {
  return 2 * key.length + PLACE_OVERHEAD_BYTES;
}

const ENTRY_OVERHEAD_BYTES = 120;
const LISTED_OVERHEAD_BYTES = 200;
// Places let go at most per write, and fewest let-go places that start tidying (see #tidyStep).
const TIDY_STEP = 8;
const TIDY_FLOOR = 64;
const PLACE_OVERHEAD_BYTES = 80;
