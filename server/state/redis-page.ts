import type { Redis } from "ioredis";
import type { OrdersPage, OrdersQuery } from "../core/order-page.ts";
import type { StoredOrder } from "../core/order-record.ts";
import type { OrderStatus } from "../core/order-status.ts";
import type { Seed } from "../core/seed.ts";

/**
 * Places of the list one Redis-mode page looks at, at most: a filter that matches little ends its page
 * early with a cursor to go on from, so that a page costs Redis and this process the same in any world.
 */
export const REDIS_PAGE_SCAN = 10_000;
/** Places read from Redis in one command while a status filter looks for its page. */
const FILTERED_BATCH = 1_000;
/** Fewest places read in one command: removed orders cost a page no more than a few round trips. */
const SMALLEST_BATCH = 64;
/** A seed order's fields in a world's hash (redis-scripts.ts), read together for each seed place of a page. */
const SEED_FIELDS = ["a:", "g:", "x:", "s:", "r:"] as const;
/** An added order's fields: its place there now (to check the sorted set's), its status and record. */
const ADDED_FIELDS = ["a:", "s:", "r:"] as const;

/** One place of a world's list as read back: its key, its order unless removed, whether a cursor may name it. */
interface Place {
  key: string;
  order?: StoredOrder;
  /** Whether the place's key leads back to this place (not added again further on), so a page may end on it. */
  resumable: boolean;
}

/**
 * A page of a world kept in Redis, over this replica's seed (order-page.ts tells the places): one read
 * of the world's counts and the cursor's place, then one or two reads per batch of the page's places: the
 * seed's by their fields (HMGET), then the added orders after the cursor from the world's sorted set of
 * them, which holds no removed order to pass. Undefined when `after` names an id the world's list never
 * held (or no longer remembers as removed).
 */
export async function redisPage(
  client: Redis,
  hash: string,
  seed: Seed,
  query: OrdersQuery,
): Promise<OrdersPage | undefined> {
  const { after, limit, status } = query;
  const cursorFields = after === undefined ? [] : [`a:${after}`, `g:${after}`];
  const [added, removed, addedAt, goneAt] = await client.hmget(hash, "na", "nx", ...cursorFields);
  const total = seed.size - Number(removed ?? 0) + Number(added ?? 0);
  const own = addedAt ?? goneAt;
  const cursor = after === undefined ? -1 : own == null ? seed.placeOf(after) : seed.size;
  if (cursor === undefined) return undefined;
  const walk: Walk = { orders: [], looked: 0, limit, ...(status !== undefined ? { status } : {}) };
  if (cursor < seed.size && (await walkSeed(client, hash, seed, cursor + 1, walk))) {
    return { orders: walk.orders, next: walk.last as string, total };
  }
  const more = await walkAdded(client, hash, own == null ? "-inf" : `(${own}`, walk);
  return more && walk.last !== undefined
    ? { orders: walk.orders, next: walk.last, total }
    : { orders: walk.orders, total };
}

/** A page being gathered: its orders, the places looked at, and the last place a cursor may name. */
interface Walk {
  orders: StoredOrder[];
  looked: number;
  last?: string;
  readonly limit: number;
  readonly status?: OrderStatus;
}

/** Whether the walk has its page, or has looked at as many places as a page may and may end here. */
function done(walk: Walk, resumable: boolean): boolean {
  return walk.orders.length === walk.limit || (walk.looked >= REDIS_PAGE_SCAN && resumable);
}

function take(walk: Walk, order: StoredOrder | undefined): void {
  if (order && (walk.status === undefined || order.status === walk.status)) walk.orders.push(order);
}

/** The seed's places from `from` on, in batches; true when the page ended among them. */
async function walkSeed(client: Redis, hash: string, seed: Seed, from: number, walk: Walk): Promise<boolean> {
  let place = from;
  while (place < seed.size) {
    const wanted =
      walk.status === undefined ? Math.max(walk.limit - walk.orders.length, SMALLEST_BATCH) : FILTERED_BATCH;
    const to = Math.min(seed.size, place + wanted);
    const batch = await readSeedPlaces(client, hash, seed, place, to);
    for (const read of batch) {
      place++;
      walk.looked++;
      if (read.resumable) walk.last = read.key;
      take(walk, read.order);
      if (done(walk, read.resumable)) return place < seed.size || (await anyAdded(client, hash));
    }
  }
  return false;
}

/**
 * The added orders after `from` (a place, exclusive, as ZRANGEBYSCORE takes it), in batches; true when
 * more follow the page. An order removed or added again between a batch's two reads is passed over.
 */
async function walkAdded(client: Redis, hash: string, from: string, walk: Walk): Promise<boolean> {
  let start = from;
  for (;;) {
    const wanted =
      walk.status === undefined ? Math.max(walk.limit - walk.orders.length, SMALLEST_BATCH) : FILTERED_BATCH;
    // One more than wanted says whether any follow, without another read.
    const found = await client.zrangebyscore(
      `${hash}:added`,
      start,
      "+inf",
      "WITHSCORES",
      "LIMIT",
      0,
      wanted + 1,
    );
    const keys: string[] = [];
    const places: string[] = [];
    for (let at = 0; at < found.length && keys.length < wanted; at += 2) {
      keys.push(found[at] as string);
      places.push(found[at + 1] as string);
    }
    if (keys.length === 0) return false;
    const fields = await client.hmget(hash, ...keys.flatMap((key) => ADDED_FIELDS.map((kind) => kind + key)));
    for (const [index, key] of keys.entries()) {
      const [addedAt, status, json] = fields.slice(index * 3, index * 3 + 3);
      start = `(${places[index]}`;
      walk.looked++;
      const here = addedAt === places[index];
      if (here) walk.last = key;
      take(walk, here ? changed(undefined, json, status, key) : undefined);
      if (done(walk, here)) return index < keys.length - 1 || found.length > keys.length * 2;
    }
    if (found.length <= keys.length * 2) return false;
  }
}

/** Whether the world has any added order: a page that ends with the seed's last place says whether more follow. */
async function anyAdded(client: Redis, hash: string): Promise<boolean> {
  return (await client.zcard(`${hash}:added`)) > 0;
}

/** The seed's places from `from` up to `to`, as the world's hash has them: its fields for those keys only. */
async function readSeedPlaces(
  client: Redis,
  hash: string,
  seed: Seed,
  from: number,
  to: number,
): Promise<Place[]> {
  const seedOrders: StoredOrder[] = [];
  for (let place = from; place < to; place++) seedOrders.push(seed.orderAt(place));
  const fields = await client.hmget(
    hash,
    ...seedOrders.flatMap((order) => SEED_FIELDS.map((kind) => kind + order.key)),
  );
  return seedOrders.map((seedOrder, index) => {
    const [addedAt, goneAt, removed, status, json] = fields.slice(index * 5, index * 5 + 5);
    return {
      key: seedOrder.key,
      resumable: addedAt === null && goneAt === null,
      ...(removed !== null ? {} : { order: changed(seedOrder, json, status) }),
    };
  });
}

/** An order as the world has it: the seed's, or an added one's, with what the world's hash changed. */
function changed(
  seedOrder: StoredOrder | undefined,
  json: string | null | undefined,
  status: string | null | undefined,
  key = seedOrder?.key as string,
): StoredOrder {
  if (seedOrder && (json ?? null) === null && (status ?? null) === null) return seedOrder;
  return {
    key,
    json: json ?? seedOrder?.json ?? "{}",
    status: (status ?? seedOrder?.status ?? "pending") as OrderStatus,
  };
}
