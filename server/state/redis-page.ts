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
/** An order's fields in a world's hash (redis-scripts.ts), read together for each place of a page. */
const ORDER_FIELDS = ["a:", "g:", "x:", "s:", "r:"] as const;

/** One place of a world's list as read back: its key, its order unless removed, whether a cursor may name it. */
interface Place {
  key: string;
  order?: StoredOrder;
  /** Whether the place's key leads back to this place (not added again further on), so a page may end on it. */
  resumable: boolean;
}

/**
 * A page of a world kept in Redis, over this replica's seed (order-page.ts tells the places): one read
 * of the world's counts and the cursor's place, then one or two reads per batch of the page's places
 * (HMGET of their fields only). Undefined when `after` names an id the world's list never held.
 */
export async function redisPage(
  client: Redis,
  hash: string,
  seed: Seed,
  query: OrdersQuery,
): Promise<OrdersPage | undefined> {
  const { after, limit, status } = query;
  const cursorFields = after === undefined ? [] : [`a:${after}`, `g:${after}`];
  const [last, added, removed, addedAt, goneAt] = await client.hmget(hash, "n", "na", "nx", ...cursorFields);
  const length = seed.size + Number(last ?? 0);
  const total = seed.size - Number(removed ?? 0) + Number(added ?? 0);
  let cursor: number | undefined = -1;
  if (after !== undefined) {
    const own = addedAt ?? goneAt;
    cursor = own === null || own === undefined ? seed.placeOf(after) : seed.size + Number(own) - 1;
    if (cursor === undefined) return undefined;
  }
  const orders: StoredOrder[] = [];
  let place = cursor + 1;
  const end = place + REDIS_PAGE_SCAN;
  let lastRead: Place | undefined;
  while (place < length && orders.length < limit) {
    if (place >= end && lastRead?.resumable) break;
    const wanted = status === undefined ? Math.max(limit - orders.length, SMALLEST_BATCH) : FILTERED_BATCH;
    const batch = await readPlaces(client, hash, seed, place, Math.min(length, place + wanted));
    for (const read of batch) {
      place++;
      lastRead = read;
      if (read.order && (status === undefined || read.order.status === status)) orders.push(read.order);
      if (orders.length === limit) break;
    }
  }
  return place < length && lastRead ? { orders, next: lastRead.key, total } : { orders, total };
}

/** The places from `from` up to `to`, as the world's hash has them: its fields for those keys only. */
async function readPlaces(
  client: Redis,
  hash: string,
  seed: Seed,
  from: number,
  to: number,
): Promise<Place[]> {
  const seedEnd = Math.min(to, seed.size);
  const seedOrders: StoredOrder[] = [];
  for (let place = from; place < seedEnd; place++) seedOrders.push(seed.orderAt(place));
  const firstAdded = Math.max(from, seed.size) - seed.size + 1;
  const addedPlaces: string[] = [];
  for (let number = firstAdded; number <= to - seed.size; number++) addedPlaces.push(`q:${number}`);
  const addedKeys = addedPlaces.length === 0 ? [] : await client.hmget(hash, ...addedPlaces);
  const keys = [...seedOrders.map((order) => order.key), ...addedKeys.map((key) => key ?? "")];
  const fields = await client.hmget(hash, ...keys.flatMap((key) => ORDER_FIELDS.map((kind) => kind + key)));
  return keys.map((key, index) => {
    const [addedAt, goneAt, removed, status, json] = fields.slice(index * 5, index * 5 + 5);
    const seedOrder = seedOrders[index];
    if (seedOrder) {
      return {
        key,
        resumable: addedAt === null && goneAt === null,
        ...(removed !== null ? {} : { order: changed(seedOrder, json, status) }),
      };
    }
    const own = String(firstAdded + index - seedOrders.length);
    return {
      key,
      resumable: key !== "" && (addedAt === own || goneAt === own),
      ...(key !== "" && addedAt === own ? { order: changed(undefined, json, status, key) } : {}),
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
