import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { Redis } from "ioredis";
import { type RedisService, startRedis } from "../../test-support/services.ts";
import { generateOrders } from "../core/generate.ts";
import type { OrdersPage } from "../core/order-page.ts";
import { type SeedOrder, serializeRecord } from "../core/order-record.ts";
import { createSeed } from "../core/seed.ts";
import { createStore, type Store } from "../core/store.ts";
import type { World } from "../core/world.ts";
import { RedisState } from "../state/redis-state.ts";
import { parseStoreUrl, type StoreAddress } from "../state/store-url.ts";

const SEED_SIZE = 500;
const seedOrders = [...generateOrders(SEED_SIZE)];
const seed = createSeed(seedOrders);
const prefix = `world-${process.pid}:`;
// Ids the generated seed does not have (it ends with ids about 2^53).
const ADDED = 2n ** 60n;

const added = (id: bigint): SeedOrder => ({ record: { id, petId: 1n, quantity: 1n }, status: "pending" });

/** Every order of a world's control pages walked with this limit, as ids, and the totals they said. */
async function walk(world: World | Store, limit: number): Promise<{ ids: string[]; totals: Set<number> }> {
  const ids: string[] = [];
  const totals = new Set<number>();
  let after: string | undefined;
  do {
    const page = (await world.page({ limit, ...(after ? { after } : {}) })) as OrdersPage;
    ids.push(...page.orders.map((order) => order.key));
    totals.add(page.total);
    after = page.next;
  } while (after !== undefined);
  return { ids, totals };
}

/** Fields and members of every key a world has in Redis (its hash and any key named after it). */
async function entriesOf(client: Redis, hash: string): Promise<number> {
  let entries = 0;
  for (const key of [hash, ...(await client.keys(`${hash}:*`))]) {
    const type = await client.type(key);
    if (type === "hash") entries += await client.hlen(key);
    else if (type === "zset") entries += await client.zcard(key);
    else entries += 1;
  }
  return entries;
}

describe("redis-world: a session in Redis costs what it holds now", () => {
  let redis: RedisService;
  let state: RedisState;
  let client: Redis;
  let sessions = 0;
  before(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    state = await RedisState.connect({
      address: parseStoreUrl(redis.url) as StoreAddress,
      prefix,
      seed,
      limits: { maxSessions: 1_000, idleMs: 600_000 },
      journalSize: 0,
    });
  });
  after(async () => {
    client.disconnect();
    await state.close();
    await redis.stop();
  });

  it("100 rounds of creating and removing the same 100 orders leave entries for the 12 live ones, not the rounds", async () => {
    const name = `rounds${++sessions}`;
    const world = state.session(name, Date.now());
    const model = createStore(seed);
    for (let index = 0n; index < 12n; index++) {
      await world.putOrder(added(ADDED + index));
      model.putOrder(added(ADDED + index));
    }
    const churned = Array.from({ length: 100 }, (_, index) => ADDED + 1_000n + BigInt(index));
    for (let round = 0; round < 100; round++) {
      await Promise.all(churned.map((id) => world.putOrder(added(id))));
      await Promise.all(churned.map((id) => world.removeOrder(id)));
      for (const id of churned) {
        model.putOrder(added(id));
        model.removeOrder(id);
      }
    }
    const entries = await entriesOf(client, `${prefix}w:s:${name}`);
    // Per live order its place, status and record; removed ids remembered for a cursor at most 64 more.
    assert.ok(entries <= 12 * 4 + 2 * 80 + 10, `${entries} entries for 12 live orders`);
    const redisWalk = await walk(world, 7);
    assert.deepEqual(redisWalk.ids, (await walk(model, 7)).ids, "the same orders in the same order");
    assert.deepEqual([...redisWalk.totals], [SEED_SIZE + 12]);
    // The id removed last is still a cursor: the page after it is the one after its last place.
    const last = (await world.page({ limit: 5, after: String(churned.at(-1)) })) as OrdersPage;
    assert.deepEqual(last.orders, []);
  });

  it("a write saves for a list read under way the fields it changes, as they were; a reset tells it to begin again", async () => {
    const name = `reading${++sessions}`;
    const hash = `${prefix}w:s:${name}`;
    const world = state.session(name, Date.now());
    await world.putOrder(added(ADDED));
    const saved = `${hash}:list-snapshot:test`;
    const version = await state.commands.petstoreListBegin(hash, saved, 60_000);
    assert.equal(version, await client.hget(hash, "v"), "the read shows the version it began at");
    await world.putOrder(added(ADDED + 1n));
    await world.removeOrder(ADDED);
    const key = String(ADDED);
    assert.deepEqual(await client.hgetall(saved), {
      [`a:${ADDED + 1n}`]: "",
      [`r:${ADDED + 1n}`]: "",
      [`x:${ADDED + 1n}`]: "",
      [`a:${key}`]: "1",
      [`r:${key}`]: serializeRecord(added(ADDED).record),
      [`x:${key}`]: "",
    });
    assert.ok((await client.pttl(saved)) > 0, "gone in a minute, were this reader to end");
    await world.reset();
    assert.equal(await client.hget(saved, "!reset"), "1");
    assert.equal(await client.zrem(`${hash}:readers`, saved), 1, "still registered until the reader ends");
    await world.putOrder(added(ADDED + 2n));
    assert.equal(await client.hexists(saved, `a:${ADDED + 2n}`), 0, "a read ended is told nothing more");
  });

  it("control pages in Redis are the memory world's pages, removed ids as cursors included", async () => {
    type Step = { kind: "add" | "remove"; index: number } | { kind: "removeSeed"; place: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constantFrom("add" as const, "remove" as const), index: fc.nat({ max: 15 }) }),
      fc.record({ kind: fc.constant("removeSeed" as const), place: fc.nat({ max: SEED_SIZE - 1 }) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 60 }),
        fc.integer({ min: 1, max: 40 }),
        async (steps, limit) => {
          const world = state.session(`pages${++sessions}`, Date.now());
          const model = createStore(seed);
          const removed: string[] = [];
          for (const each of steps) {
            const id =
              each.kind === "removeSeed"
                ? (seedOrders[each.place] as SeedOrder).record.id
                : ADDED + BigInt(each.index);
            if (each.kind === "add") {
              assert.equal(await world.putOrder(added(id)), model.putOrder(added(id)));
            } else {
              assert.equal(await world.removeOrder(id), model.removeOrder(id));
              removed.push(String(id));
            }
          }
          assert.deepEqual((await walk(world, limit)).ids, (await walk(model, limit)).ids);
          for (const after of removed) {
            const ofRedis = await world.page({ limit, after });
            const ofMemory = model.page({ limit, after });
            assert.deepEqual(
              ofRedis?.orders.map((order) => order.key),
              ofMemory?.orders.map((order) => order.key),
            );
            assert.equal(ofRedis?.next, ofMemory?.next, `the page after ${after}`);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
