import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { tempFolder } from "../../common/temp-folder.ts";
import {
  canonicalInt64,
  createOrderSupply,
  idsFromHook,
  MAX_ORDER_IDS,
  RELEASE_BATCH,
  readOrderIdsFile,
} from "../explore/orders.ts";
import type { HookContext, ProvisionRequest } from "../target/hook-types.ts";
import { HookError } from "../target/hooks.ts";
import { ConformanceUsageError } from "../target/target.ts";

const context: HookContext = { baseUrl: "http://127.0.0.1:1/v1", apiKey: "k", fetch: globalThis.fetch };

describe("explore's orders", () => {
  it("hands out each pending order once, and says when there are not enough left", async () => {
    const supply = createOrderSupply({ pending: ["1", "2", "3"], shipped: [], missing: [] }, {}, context, []);
    assert.deepEqual(await supply.pending(2), ["1", "2"]);
    assert.equal(await supply.pending(2), undefined);
    assert.deepEqual(await supply.pending(1), ["3"]);
    assert.equal(supply.used, 3);
    assert.deepEqual(await supply.shipped(1), []);
  });

  it("asks the provision hook for more as often as needed, and hands out a provisioned shipped order once", async () => {
    let next = 100;
    const asked: number[] = [];
    const supply = createOrderSupply(
      { pending: [], shipped: [], missing: [] },
      {
        provision: (_context, wanted) => {
          asked.push(wanted.pending);
          if (next > 103) return { pending: [] };
          return { pending: [String(next++), String(next++)], shipped: ["9"] };
        },
      },
      context,
      [],
    );
    assert.deepEqual(await supply.pending(3), ["100", "101", "102"]);
    assert.deepEqual(await supply.pending(2), undefined);
    assert.ok(asked.length >= 3);
    assert.deepEqual(await supply.shipped(1), ["9"]);
    assert.deepEqual(await supply.shipped(1), [], "released with its history, it may be gone");
  });

  it("reuses the shipped orders given, and releases only a history's pending and provisioned orders", async () => {
    const released: string[][] = [];
    const supply = createOrderSupply(
      { pending: [], shipped: ["7"], missing: [] },
      {
        provision: (_context, wanted) => ({ pending: wanted.pending > 0 ? ["1", "2"] : [], shipped: ["8"] }),
        release: (_context, ids) => {
          released.push([...ids]);
        },
      },
      context,
      [],
    );
    const pending = (await supply.pending(2)) ?? [];
    const shipped = [...((await supply.shipped(1)) ?? []), ...((await supply.shipped(1)) ?? [])];
    assert.deepEqual(shipped.sort(), ["7", "8"]);
    await supply.release([...pending, ...shipped]);
    await supply.settle();
    assert.deepEqual(released, [["1", "2", "8"]]);
    assert.deepEqual(await supply.shipped(2), ["7", "7"], "the given one, again and again");
  });

  it("refuses ids a provision hook gave before: a hook with nothing new has no more orders", async () => {
    let calls = 0;
    const supply = createOrderSupply(
      { pending: ["1"], shipped: [], missing: [] },
      {
        provision: () => {
          if (++calls > 100) throw new Error("asked the hook over and over");
          return { pending: ["3", "1"] };
        },
      },
      context,
      [],
    );
    assert.deepEqual(await supply.pending(2), ["1", "3"]);
    assert.equal(await supply.pending(1), undefined);
    assert.ok(calls <= 2);
  });

  it("stops asking the provision hook once the run's time is up", async () => {
    let next = 1;
    const supply = createOrderSupply(
      { pending: [], shipped: [], missing: [] },
      { provision: () => ({ pending: [String(next++)] }) },
      context,
      [],
    );
    assert.equal(await supply.pending(3, performance.now() - 1), undefined);
    assert.equal(next, 1);
  });

  it("calls the provision hook once at a time when histories played at once ask together", async () => {
    let calls = 0;
    let inFlight = 0;
    let next = 1;
    const supply = createOrderSupply(
      { pending: [], shipped: [], missing: [] },
      {
        provision: async (_context, wanted) => {
          calls++;
          inFlight++;
          assert.equal(inFlight, 1, "two provision calls at once");
          await new Promise((resolve) => setImmediate(resolve));
          inFlight--;
          return { pending: Array.from({ length: wanted.pending }, () => String(next++)) };
        },
      },
      context,
      [],
    );
    const handed = await Promise.all(Array.from({ length: 3 }, () => supply.pending(2)));
    const ids = handed.flatMap((got) => got ?? []);
    assert.equal(ids.length, 6);
    assert.equal(new Set(ids).size, 6);
    assert.equal(calls, 2, "the batch the three histories shared, then the next asked ahead");
  });

  it("gives orders back behind the histories and asks for the next batch before one waits", async () => {
    let next = 1;
    const provisioned: number[] = [];
    let openRelease: () => void = () => {};
    const released: string[][] = [];
    const supply = createOrderSupply(
      { pending: [], shipped: [], missing: [] },
      {
        provision: (_context, wanted) => {
          provisioned.push(wanted.pending);
          return { pending: Array.from({ length: wanted.pending }, () => String(next++)) };
        },
        release: async (_context, ids) => {
          await new Promise<void>((resolve) => {
            openRelease = resolve;
          });
          released.push([...ids]);
        },
      },
      context,
      [],
    );
    const taken = (await supply.pending(6)) ?? [];
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(provisioned, [8, 8], "the second batch asked for with 2 still waiting");
    await supply.release(taken);
    assert.equal(released.length, 0, "the history goes on while its orders are given back");
    const settled = supply.settle();
    openRelease();
    await new Promise((resolve) => setImmediate(resolve));
    openRelease();
    await settled;
    assert.deepEqual(released[0], taken);
    assert.equal(released[1]?.length, 10, "the orders provisioned and never handed out, released at the end");
  });

  it("throws a failed release to the next caller, or from settle", async () => {
    const supply = createOrderSupply(
      { pending: ["1", "2", "3"], shipped: [], missing: [] },
      {
        release: () => {
          throw new Error("the control API is gone");
        },
      },
      context,
      [],
    );
    await supply.release(idsFrom(100, RELEASE_BATCH));
    await new Promise((resolve) => setImmediate(resolve));
    assert.match(String(supply.broken.reason), /the control API is gone/, "said at once, to stop the search");
    await assert.rejects(supply.settle(), /the control API is gone/);
    await supply.release(["2"]);
    await new Promise((resolve) => setImmediate(resolve));
    await assert.rejects(supply.pending(1), /the control API is gone/);
  });

  it("gives up on a provision call that does not return at the stop or the deadline, and settle says so", async () => {
    const stop = new AbortController();
    const never = new Promise<never>(() => {});
    const supply = createOrderSupply(
      { pending: [], shipped: [], missing: [] },
      {
        provision: () => {
          stop.abort();
          return never;
        },
      },
      context,
      [],
    );
    assert.equal(await supply.pending(2, undefined, stop.signal), undefined);
    assert.equal(await supply.shipped(1, undefined, stop.signal), undefined);
    assert.equal(await supply.pending(2, performance.now() + 1), undefined, "the deadline bounds it too");
    await assert.rejects(
      supply.settle({ ms: 1, name: "the grace" }),
      /^HookError: the provision hook did not return within 1 ms \(the grace\)/,
    );
  });

  it("gives up on a provision call only once its deadline has passed, so that the caller reads the time as up", async () => {
    const supply = createOrderSupply(
      { pending: [], shipped: [], missing: [] },
      { provision: () => new Promise<never>(() => {}) },
      context,
      [],
    );
    for (let round = 0; round < 20; round++) {
      const until = performance.now() + 2.5 + (round % 5) * 0.3;
      assert.equal(await supply.pending(1, until), undefined);
      const early = until - performance.now();
      assert.ok(early <= 0, `gave up ${early.toFixed(3)} ms before the deadline`);
    }
  });

  it("gives up on a release call that does not return, and says orders may be left", async () => {
    const supply = createOrderSupply(
      { pending: ["1"], shipped: [], missing: [] },
      { release: () => new Promise<never>(() => {}) },
      context,
      [],
    );
    await supply.release((await supply.pending(1)) ?? []);
    await assert.rejects(
      supply.settle({ ms: 1, name: "the grace" }),
      /the release hook did not return within 1 ms \(the grace\) .*may be left in the deployment/,
    );
  });

  it("asks for shipped orders ahead once a history took one, in the same call as pending ones", async () => {
    let next = 1;
    const asked: ProvisionRequest[] = [];
    const made = (count: number) => Array.from({ length: count }, () => String(next++));
    const supply = createOrderSupply(
      { pending: [], shipped: [], missing: [] },
      {
        provision: (_context, wanted) => {
          asked.push({ ...wanted });
          return { pending: made(wanted.pending), shipped: made(wanted.shipped) };
        },
      },
      context,
      [],
    );
    await supply.pending(1);
    for (let history = 0; history < 7; history++) await supply.shipped(1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(asked, [
      { pending: 8, shipped: 0 },
      { pending: 0, shipped: 8 },
      { pending: 8, shipped: 8 },
    ]);
    assert.equal((await supply.shipped(2))?.length, 2);
    assert.equal(asked.length, 3, "the shipped orders were there before a history asked");
  });

  it("holds ended histories' orders back until a batch is queued, and releases the rest at the end", async () => {
    const calls: string[][] = [];
    const supply = createOrderSupply(
      { pending: [], shipped: [], missing: [] },
      {
        release: (_context, ids) => {
          calls.push([...ids]);
        },
      },
      context,
      [],
    );
    await supply.release(idsFrom(1, 3));
    assert.equal(calls.length, 0, "one history's orders wait for others'");
    await supply.release(idsFrom(4, RELEASE_BATCH - 3));
    assert.deepEqual(calls, [idsFrom(1, RELEASE_BATCH)]);
    await supply.release(idsFrom(100, 2));
    assert.equal(calls.length, 1);
    await supply.settle();
    assert.deepEqual(calls[1], idsFrom(100, 2));
  });

  it("releases the orders of histories that end together in one call at a time", async () => {
    const calls: string[][] = [];
    let inFlight = 0;
    const supply = createOrderSupply(
      { pending: [], shipped: [], missing: [] },
      {
        release: async (_context, ids) => {
          inFlight++;
          assert.equal(inFlight, 1, "two release calls at once");
          calls.push([...ids]);
          await new Promise((resolve) => setImmediate(resolve));
          inFlight--;
        },
      },
      context,
      [],
    );
    const histories = [1, 2, 3, 4].map((history) => idsFrom(history * 100, RELEASE_BATCH));
    await Promise.all(histories.map((ids) => supply.release(ids)));
    await supply.settle();
    assert.deepEqual(calls.flat().sort(), histories.flat().sort());
    assert.equal(calls.length, 2, "the first history's, then the three that ended while it was out");
  });

  it("hands out an id given twice once, and counts it once", async () => {
    const given = { pending: ["1", "2", "1", "3", "2", "1"], shipped: [], missing: [] };
    const supply = createOrderSupply(given, {}, context, []);
    assert.equal(supply.pendingLimit, 3);
    assert.deepEqual(await supply.pending(2), ["1", "2"]);
    assert.equal(await supply.pending(2), undefined, "one distinct id is left, however many were given");
    assert.deepEqual(await supply.pending(1), ["3"]);
    assert.equal(await supply.pending(1), undefined);
    assert.equal(supply.used, 3);
  });

  it("takes a hook's arrays and single ids as canonical digits, and refuses ids that are not", () => {
    assert.deepEqual(
      idsFromHook({ pending: ["007"], pendingOrderId: "8", shippedOrderId: "9", missing: ["10"] }),
      {
        pending: ["7", "8"],
        shipped: ["9"],
        missing: ["10"],
      },
    );
    assert.throws(() => idsFromHook({ pending: [12 as unknown as string] }), HookError);
    assert.throws(() => idsFromHook({ shipped: ["9223372036854775808"] }), /within int64/);
  });

  it("reads --order-ids FILE, keeping int64 ids exact, and names what is wrong with a bad one", () => {
    const folder = tempFolder("explore-orders-");
    const file = (text: string) => {
      const path = join(folder, `${Math.random()}.json`);
      writeFileSync(path, text);
      return path;
    };
    assert.deepEqual(
      readOrderIdsFile(file('{"pending":["9223372036854775807"],"missing":["-1"]}'), "--order-ids"),
      {
        pending: ["9223372036854775807"],
        shipped: [],
        missing: ["-1"],
      },
    );
    assert.throws(() => readOrderIdsFile(file("[]"), "--order-ids"), ConformanceUsageError);
    assert.throws(() => readOrderIdsFile(file("{"), "--order-ids"), /is not JSON/);
    assert.throws(() => readOrderIdsFile(file('{"pending":"1"}'), "--order-ids"), /must be an array/);
    assert.throws(() => readOrderIdsFile(join(folder, "none.json"), "--order-ids"), ConformanceUsageError);
    assert.deepEqual(
      readOrderIdsFile(file('\ufeff{"pending":["7"]}'), "--order-ids").pending,
      ["7"],
      "a byte-order mark begins the file, no part of its JSON",
    );
    assert.throws(
      () => readOrderIdsFile(file('{"pending":[2]}'), "--order-ids"),
      /pending\[0\] must be a string of digits within int64 \(got the number 2\)$/,
    );
    assert.throws(
      () => readOrderIdsFile(file('{"pending":["1","2"],"shipped":["3","02"]}'), "--order-ids"),
      /: id 2 is listed twice, at pending\[1\] and shipped\[1\]: an order is in one state$/,
    );
  });

  it("refuses a file that names one list twice, whose first JSON would drop without a word", () => {
    const folder = tempFolder("explore-orders-");
    const path = join(folder, "twice.json");
    writeFileSync(path, '{"pending":["1","2"], "shipped":["3"],\n "pend\\u0069ng":["4"]}');
    assert.throws(
      () => readOrderIdsFile(path, "--order-ids"),
      /^ConformanceUsageError: --order-ids .*twice\.json names "pending" twice: JSON keeps only the last, so give each list once$/,
    );
    writeFileSync(
      path,
      '{"pending":["1"],"shipped":["2"],"missing":["3"],"note":{"pending":"x","a":["pending"]}}',
    );
    assert.deepEqual(readOrderIdsFile(path, "--order-ids").pending, ["1"], "keys within a value are its own");
  });

  it("refuses more ids than a run keeps, saying how many and what to do, before checking them", () => {
    const folder = tempFolder("explore-orders-");
    const path = join(folder, "many.json");
    const ids = Array.from({ length: MAX_ORDER_IDS + 1 }, (_, at) => String(at + 1));
    writeFileSync(path, JSON.stringify({ pending: ids.slice(0, 10), shipped: ids.slice(10) }));
    assert.throws(
      () => readOrderIdsFile(path, "--order-ids"),
      new RegExp(`holds ${MAX_ORDER_IDS + 1} ids, more than the ${MAX_ORDER_IDS} a run keeps: give fewer`),
    );
    writeFileSync(path, JSON.stringify({ pending: ids.slice(1) }));
    assert.equal(readOrderIdsFile(path, "--order-ids").pending.length, MAX_ORDER_IDS);
  });

  it("checks an id by its text as BigInt would: canonical digits within int64, or refused", () => {
    const byBigInt = (id: string) => {
      if (!/^-?\d{1,20}$/.test(id)) return undefined;
      const value = BigInt(id);
      return value >= -(2n ** 63n) && value < 2n ** 63n ? value.toString() : undefined;
    };
    const near = (edge: bigint) => fc.bigInt({ min: edge - 3n, max: edge + 3n }).map(String);
    const padded = fc
      .tuple(fc.constantFrom("", "-"), fc.stringMatching(/^0{0,4}/), fc.bigInt({ min: 0n, max: 2n ** 64n }))
      .map(([sign, zeros, digits]) => `${sign}${zeros}${digits}`);
    const anyText = fc.string({
      unit: fc.constantFrom("0", "1", "9", "-", "+", " ", "e", "٣"),
      maxLength: 22,
    });
    fc.assert(
      fc.property(fc.oneof(near(2n ** 63n), near(-(2n ** 63n)), padded, anyText), (id) => {
        assert.equal(canonicalInt64(id), byBigInt(id));
      }),
      { numRuns: 2000 },
    );
    for (const id of [undefined, 7, 7n, null, ["1"]]) assert.equal(canonicalInt64(id), undefined);
  });
});

/** `count` ids counting up from `first`. */
function idsFrom(first: number, count: number): string[] {
  return Array.from({ length: count }, (_, at) => String(first + at));
}
