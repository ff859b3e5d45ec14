import type { Redis } from "ioredis";
import { type ListPieces, listPieces } from "../core/list-pieces.ts";
import type { StoredOrder } from "../core/order-record.ts";
import type { Seed } from "../core/seed.ts";

/** The fields of a world's hash (redis-scripts.ts) a list body shows: records, removals, added places. */
const LIST_FIELDS = "[rxa]:*";
/** Fields Redis looks at per HSCAN: each reply is small, so reading it holds this process briefly. */
const SCAN_COUNT = 1_000;
/** Reads of a world that another replica changed meanwhile, before its list is made from the last one. */
const READ_ATTEMPTS = 3;

/** What a world changed that its list shows, as read from its hash. */
interface ListChanges {
  records: Map<string, string>;
  removed: Set<string>;
  addedAt: Map<string, number>;
}

/** A world's list body and the version of the world it shows. */
export interface RedisListBody {
  version: string;
  body: Uint8Array | ListPieces;
}

/**
 * A world's list body, read from its hash a slice at a time (HSCAN of the fields a list shows, never the
 * statuses) and made as pieces over the seed's body (list-pieces.ts): it costs this process what the world
 * changed, in small steps. `counted` is told the bytes of each reply as it is read, before they are kept.
 * A version that moved during the read (another replica's change) makes it read again.
 */
export async function readListBody(
  client: Redis,
  hash: string,
  seed: Seed,
  counted: (bytes: number) => void,
): Promise<RedisListBody> {
  for (let attempt = 1; ; attempt++) {
    const version = (await client.hget(hash, "v")) ?? "0";
    const changes = await readChanges(client, hash, counted);
    const now = (await client.hget(hash, "v")) ?? "0";
    if (now === version || attempt === READ_ATTEMPTS) return { version, body: bodyOf(seed, changes) };
  }
}

async function readChanges(
  client: Redis,
  hash: string,
  counted: (bytes: number) => void,
): Promise<ListChanges> {
  const changes: ListChanges = { records: new Map(), removed: new Set(), addedAt: new Map() };
  let cursor = "0";
  do {
    const [next, fields] = await client.hscan(hash, cursor, "MATCH", LIST_FIELDS, "COUNT", SCAN_COUNT);
    let bytes = 0;
    for (let index = 0; index < fields.length; index += 2) {
      const field = fields[index] as string;
      const value = fields[index + 1] as string;
      bytes += field.length + value.length;
      const key = field.slice(2);
      if (field.startsWith("r:")) changes.records.set(key, value);
      else if (field.startsWith("x:")) changes.removed.add(key);
      else changes.addedAt.set(key, Number(value));
    }
    counted(bytes);
    cursor = next;
  } while (cursor !== "0");
  return changes;
}

/** The seed's body when the world changed nothing a list shows; else pieces over it. */
function bodyOf(seed: Seed, { records, removed, addedAt }: ListChanges): Uint8Array | ListPieces {
  if (records.size === 0 && removed.size === 0 && addedAt.size === 0) return seed.listBody;
  // A seed order removed, or added again after its removal (it then stands among the added), leaves its place.
  const changedAt = new Map<number, StoredOrder | null>();
  const changeAt = (key: string, order: StoredOrder | null) => {
    const place = seed.placeOf(key);
    if (place !== undefined) changedAt.set(place, order);
  };
  for (const key of removed) changeAt(key, null);
  for (const key of addedAt.keys()) changeAt(key, null);
  for (const [key, json] of records) {
    if (removed.has(key) || addedAt.has(key)) continue;
    const place = seed.placeOf(key);
    if (place !== undefined) changedAt.set(place, { key, json, status: seed.statusAt(place) });
  }
  const added = [...addedAt]
    .sort((a, b) => a[1] - b[1])
    .map(([key]): StoredOrder => ({ key, json: records.get(key) ?? "{}", status: "pending" }));
  return listPieces(seed, changedAt, added);
}
