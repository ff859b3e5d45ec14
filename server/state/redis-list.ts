import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { type ListPieces, listPieces } from "../core/list-pieces.ts";
import type { StoredOrder } from "../core/order-record.ts";
import type { Seed } from "../core/seed.ts";
import type { Commands } from "./redis-backend.ts";

/** The fields of a world's hash (redis-scripts.ts) a list body shows: records, removals, added places. */
const LIST_FIELDS = "[rxa]:*";
/** Fields Redis looks at per HSCAN: each reply is small, so reading it holds this process briefly. */
const SCAN_COUNT = 1_000;
/**
 * How long a list read may take, and its saved fields (or copy) outlive it: only when this process ends
 * during it. A read that takes longer begins again.
 */
const SNAPSHOT_TTL_MS = 60_000;

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
 * Slices read while another replica changes the world would mix its states (an added order's place without
 * its record, two orders that never stood together): a version that moved during the read makes it read
 * again as a registered reader, for which each write saves what it changes (readAsOfStart): no step of it
 * is proportional to the world in Redis either.
 */
export async function readListBody(
  client: Redis,
  hash: string,
  seed: Seed,
  counted: (bytes: number) => void,
): Promise<RedisListBody> {
  const version = (await client.hget(hash, "v")) ?? "0";
  const changes = await readChanges(client, hash, counted);
  if (((await client.hget(hash, "v")) ?? "0") === version) return { version, body: bodyOf(seed, changes) };
  return readSnapshot(client, hash, seed, counted);
}

/** Reads begun again when a reset came in the middle, before one copy of the hash is read instead. */
const READ_ATTEMPTS = 3;

/**
 * The list body as the world was when this read began: its hash read in slices as it changes, then what
 * the writes meanwhile saved of the fields they changed (redis-scripts.ts, LIST_READERS) put back over it.
 * A reset meanwhile, or a read that outlived its registration, begins again; past READ_ATTEMPTS, one copy.
 */
async function readSnapshot(
  client: Redis,
  hash: string,
  seed: Seed,
  counted: (bytes: number) => void,
): Promise<RedisListBody> {
  // Random, not this process's id: replicas in containers on one Redis may all be process 1.
  const saved = `${hash}:list-snapshot:${randomBytes(9).toString("base64url")}`;
  const begin = (client as unknown as Commands).petstoreListBegin;
  try {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const version = String(await begin.call(client, hash, saved, SNAPSHOT_TTL_MS));
      const changes = await readChanges(client, hash, counted);
      const registered = (await client.zrem(`${hash}:readers`, saved)) === 1;
      if (registered && (await putBack(client, saved, changes, counted))) {
        return { version, body: bodyOf(seed, changes) };
      }
    }
    return await readCopy(client, hash, saved, seed, counted);
  } finally {
    await client.unlink(saved).catch(() => {});
  }
}

/** Puts the saved fields back over what was read; false when a reset came meanwhile. */
async function putBack(
  client: Redis,
  saved: string,
  changes: ListChanges,
  counted: (bytes: number) => void,
): Promise<boolean> {
  let cursor = "0";
  do {
    const [next, fields] = await client.hscan(saved, cursor, "COUNT", SCAN_COUNT);
    let bytes = 0;
    for (let index = 0; index < fields.length; index += 2) {
      const field = fields[index] as string;
      const value = fields[index + 1] as string;
      if (field === "!reset") return false;
      bytes += field.length + value.length;
      const key = field.slice(2);
      const kind = field[0];
      const map = kind === "r" ? changes.records : kind === "a" ? changes.addedAt : undefined;
      if (value === "") {
        map?.delete(key);
        if (kind === "x") changes.removed.delete(key);
      } else if (kind === "x") changes.removed.add(key);
      else if (kind === "r") changes.records.set(key, value);
      else changes.addedAt.set(key, Number(value));
    }
    counted(bytes);
    cursor = next;
  } while (cursor !== "0");
  return true;
}

/** The list body from a copy of the world's hash taken at one moment, gone once read. */
async function readCopy(
  client: Redis,
  hash: string,
  copy: string,
  seed: Seed,
  counted: (bytes: number) => void,
): Promise<RedisListBody> {
  const replies = await client.multi().copy(hash, copy, "REPLACE").pexpire(copy, SNAPSHOT_TTL_MS).exec();
  const failed = replies?.find(([error]) => error)?.[0];
  if (failed) throw failed;
  const version = (await client.hget(copy, "v")) ?? "0";
  return { version, body: bodyOf(seed, await readChanges(client, copy, counted)) };
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
