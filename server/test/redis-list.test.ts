import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import { Redis } from "ioredis";
import { type RedisService, startRedis } from "../../test-support/services.ts";
import { wholeBytes } from "../core/exchange.ts";
import { generateOrders } from "../core/generate.ts";
import { type SeedOrder, serializeRecord } from "../core/order-record.ts";
import { createSeed } from "../core/seed.ts";
import { createStore, type Store } from "../core/store.ts";
import type { World } from "../core/world.ts";
import { RedisState } from "../state/redis-state.ts";
import { parseStoreUrl, type StoreAddress } from "../state/store-url.ts";

const SEED_SIZE = 20_000;
const seedOrders = [...generateOrders(SEED_SIZE)];
const seed = createSeed(seedOrders);
const decoder = new TextDecoder();

type Step =
  | { kind: "replace"; place: number; quantity: bigint }
  | { kind: "remove"; place: number }
  | { kind: "add"; id: bigint }
  | { kind: "removeAdded"; index: number }
  | { kind: "cancel"; place: number };

const place = fc.nat({ max: SEED_SIZE - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("replace" as const),
    place,
    quantity: fc.bigInt({ min: 2n, max: 2n ** 63n - 1n }),
  }),
  fc.record({ kind: fc.constant("remove" as const), place }),
  fc.record({ kind: fc.constant("add" as const), id: fc.bigInt({ min: 2n ** 53n, max: 2n ** 53n + 20n }) }),
  fc.record({ kind: fc.constant("removeAdded" as const), index: fc.nat({ max: 20 }) }),
  fc.record({ kind: fc.constant("cancel" as const), place }),
);

/** The same step on a world in Redis and on a store in memory, the model of what its list must be. */
async function apply(world: World, model: Store, each: Step): Promise<void> {
  const ofPlace = (at: number) => seedOrders[at] as SeedOrder;
  if (each.kind === "replace") {
    const order: SeedOrder = {
      ...ofPlace(each.place),
      record: { ...ofPlace(each.place).record, quantity: each.quantity },
    };
    model.putOrder(order);
    await world.putOrder(order);
  } else if (each.kind === "add") {
    const order: SeedOrder = { record: { id: each.id, petId: 1n, quantity: 1n }, status: "pending" };
    model.putOrder(order);
    await world.putOrder(order);
  } else {
    const id = each.kind === "removeAdded" ? 2n ** 53n + BigInt(each.index) : ofPlace(each.place).record.id;
    if (each.kind === "cancel") {
      model.cancel(id);
      await world.cancel(id);
    } else {
      model.removeOrder(id);
      await world.removeOrder(id);
    }
  }
}

describe("redis-list", () => {
  let redis: RedisService;
  let state: RedisState;
  let sessions = 0;
  before(async () => {
    redis = await startRedis();
    state = await RedisState.connect({
      address: parseStoreUrl(redis.url) as StoreAddress,
      prefix: `list-${process.pid}:`,
      seed,
      limits: { maxSessions: 1_000, idleMs: 600_000 },
      journalSize: 0,
    });
  });
  after(async () => {
    await state.close();
    await redis.stop();
  });

  /** A fresh session's world, its version read as a request's would be. */
  const fresh = async (): Promise<World> => state.session(`s${++sessions}`, Date.now());
  const listOf = async (world: World) => {
    await world.arrange(undefined);
    return wholeBytes(await world.listBody());
  };

  it("a session's list in Redis mode is its orders as memory mode lists them, byte for byte", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const world = await fresh();
        const model = createStore(seed);
        for (const each of steps) await apply(world, model, each);
        assert.equal(decoder.decode(await listOf(world)), decoder.decode(wholeBytes(model.listBody())));
      }),
      { numRuns: 30 },
    );
  });

  it("a changed session's list is pieces over the seed's body, read a bounded slice of its hash at a time", async () => {
    const world = await fresh();
    const hash = `list-${process.pid}:w:s:s${sessions}`;
    // Thousands of cancels and a few hundred replaced orders: a hash Redis keeps as a table, scanned in steps.
    const client = new Redis(redis.url);
    try {
      const pipeline = client.pipeline();
      for (const order of seedOrders.slice(0, 5_000))
        pipeline.hset(hash, `s:${order.record.id}`, "cancelled");
      await pipeline.exec();
    } finally {
      client.disconnect();
    }
    const model = createStore(seed);
    for (let at = 10_000; at < 10_300; at++)
      await apply(world, model, { kind: "replace", place: at, quantity: 5n });
    await apply(world, model, { kind: "add", id: 2n ** 53n });

    const reads = await hashReads(redis, hash, async () => {
      await world.arrange(undefined);
      const body = await world.listBody();
      assert.ok(!(body instanceof Uint8Array), "the list is pieces, not one array made whole");
      assert.equal(decoder.decode(wholeBytes(body)), decoder.decode(wholeBytes(model.listBody())));
    });
    assert.ok(
      !reads.some(([command]) => command === "hgetall"),
      `no read of the whole hash: ${reads.map(([c]) => c)}`,
    );
    const scans = reads.filter(([command]) => command === "hscan");
    assert.ok(scans.length > 1, `the hash is read in several slices (${scans.length})`);
    assert.ok(
      scans.every((read) => read.includes("1000")),
      "each slice bounded",
    );
    const held = (world as unknown as { heldBytes: number }).heldBytes;
    assert.ok(
      held > 0 && held < seed.listBody.length / 10,
      `the session holds its own orders, not the list (${held})`,
    );
  });
  it("a list read while another replica adds and removes orders is the world at one moment, every order whole, and copies nothing", async () => {
    const name = `churn${++sessions}`;
    const hash = `list-${process.pid}:w:s:${name}`;
    // Many changed seed orders: a hash Redis keeps as a table, so a list body is read in several slices.
    const client = new Redis(redis.url);
    try {
      const pipeline = client.pipeline();
      for (const order of seedOrders.slice(0, 8_000))
        pipeline.hset(hash, `r:${order.record.id}`, serializeRecord(order.record));
      await pipeline.exec();
    } finally {
      client.disconnect();
    }
    const other = await RedisState.connect({
      address: parseStoreUrl(redis.url) as StoreAddress,
      prefix: `list-${process.pid}:`,
      seed,
      limits: { maxSessions: 1_000, idleMs: 600_000 },
      journalSize: 0,
    });
    const writer = other.session(name, Date.now());
    const reader = state.session(name, Date.now());
    // The writer keeps the world holding one or two added orders, consecutive: K(i-1) and K(i), then K(i) alone.
    // Ids JSON.parse keeps exactly, away from the seed's.
    const first = 2n ** 52n;
    let churning = true;
    const churn = (async () => {
      for (let next = first; churning; next++) {
        await writer.putOrder({ record: { id: next, petId: 1n, quantity: 1n }, status: "pending" });
        if (next > first) await writer.removeOrder(next - 1n);
      }
    })();
    const problems: string[] = [];
    const lists = 40;
    // What Redis ran meanwhile: no COPY, which is one step as long as the hash.
    const watcher = new Redis(redis.url);
    const calls = async (command: string) =>
      Number(
        /calls=(\d+)/.exec((await watcher.info("commandstats")).split(`cmdstat_${command}:`)[1] ?? "")?.[1] ??
          0,
      );
    const [copies, saves] = [await calls("copy"), await calls("hsetnx")];
    try {
      for (let read = 0; read < lists; read++) {
        await reader.arrange(undefined);
        const orders = JSON.parse(decoder.decode(wholeBytes(await reader.listBody()))) as Record<
          string,
          unknown
        >[];
        const added = orders.slice(SEED_SIZE).map((order) => Number(order.id));
        const whole = orders.every((order) => "id" in order && "petId" in order && "quantity" in order);
        const moment =
          orders.length >= SEED_SIZE + 1 &&
          orders.length <= SEED_SIZE + 2 &&
          added.every((id, index) => index === 0 || id === (added[0] as number) + 1);
        if (!whole || !moment)
          problems.push(`list ${read}: ${orders.length} orders, added ${added.join(" ")}`);
      }
    } finally {
      churning = false;
      await churn;
      await other.close();
    }
    try {
      assert.equal(await calls("copy"), copies, "no list read copied the hash");
      assert.ok((await calls("hsetnx")) > saves, "writes saved what they changed for a read under way");
    } finally {
      watcher.disconnect();
    }
    const leftOver = new Redis(redis.url);
    try {
      assert.deepEqual(
        await leftOver.keys(`${hash}:list-snapshot:*`),
        [],
        "each copy a list was read from is gone",
      );
    } finally {
      leftOver.disconnect();
    }
    assert.deepEqual(
      problems,
      [],
      `${problems.length} of ${lists} lists were no state the world was ever in`,
    );
  });
});

/** The commands Redis ran on this hash while `run` ran (MONITOR), each as its name and arguments. */
async function hashReads(redis: RedisService, hash: string, run: () => Promise<void>): Promise<string[][]> {
  const marker = new Redis(redis.url);
  const monitor = await marker.monitor();
  const reads: string[][] = [];
  let marked = false;
  monitor.on("monitor", (_time: string, args: string[]) => {
    const [command = "", key = ""] = args.map(String);
    if (marked) return;
    if (key === `${hash}:marker`) marked = true;
    else if (key === hash) reads.push([command.toLowerCase(), ...args.slice(2).map(String)]);
  });
  try {
    await run();
    // Every command sent before the marker has been seen once the marker is.
    await marker.get(`${hash}:marker`);
    while (!marked) await sleep(10);
    return reads;
  } finally {
    monitor.disconnect();
    marker.disconnect();
  }
}
