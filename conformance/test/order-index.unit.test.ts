import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { halvesOfBigint, Int64Index } from "../../contract/int64-index.ts";
import { OrderIndex } from "../judging/order-index.ts";

/** A list as ids with a record digest each, indexed as the list judge indexes it. */
function indexOf(orders: ReadonlyArray<readonly [bigint, number]>): OrderIndex {
  const index = new OrderIndex();
  for (const [id, digest] of orders) {
    const { hi, lo } = halvesOfBigint(id);
    index.add(hi, lo, digest, ~digest);
  }
  return index;
}

// Ids in and out of order, small and beyond 2^53 and at the int64 bounds.
const id = fc.oneof(
  fc.bigInt({ min: 1n, max: 60n }),
  fc.bigInt({ min: 2n ** 53n - 5n, max: 2n ** 53n + 5n }),
  fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n),
);
const list = fc.uniqueArray(fc.tuple(id, fc.integer({ min: 0, max: 3 })), {
  maxLength: 40,
  selector: ([value]) => value,
});

/** A later reading: some orders gone, some new, some changed, a stretch moved, or the same list. */
const laterOf = (earlier: Array<[bigint, number]>) =>
  fc
    .tuple(
      fc.array(fc.boolean(), { minLength: earlier.length, maxLength: earlier.length }),
      fc.array(fc.tuple(fc.bigInt({ min: 100n, max: 140n }), fc.nat({ max: 40 }))),
      fc.array(fc.nat({ max: 40 }), { maxLength: 4 }),
      fc.nat({ max: 40 }),
      fc.nat({ max: 40 }),
    )
    .map(([kept, added, changed, from, to]) => {
      const later = earlier.filter((_, place) => kept[place]).map(([value, digest]) => [value, digest]);
      for (const place of changed) {
        const order = later[place % Math.max(later.length, 1)];
        if (order) order[1] = (order[1] as number) + 7;
      }
      const moved = later.splice(Math.min(from, to), Math.abs(to - from));
      later.push(...moved);
      for (const [value, at] of added) {
        if (!later.some(([other]) => other === value)) later.splice(at % (later.length + 1), 0, [value, 9]);
      }
      return later as Array<[bigint, number]>;
    });

/** What differs between two lists, worked out with maps of ids. */
function expected(earlier: Array<[bigint, number]>, later: Array<[bigint, number]>) {
  const before = new Map(earlier);
  const after = new Map(later);
  const ids = (orders: Array<[bigint, number]>, keep: (value: bigint, digest: number) => boolean) =>
    orders.filter(([value, digest]) => keep(value, digest)).map(([value]) => String(value));
  return {
    vanished: ids(earlier, (value) => !after.has(value)),
    changed: ids(earlier, (value, digest) => after.has(value) && after.get(value) !== digest),
    appeared: ids(later, (value) => !before.has(value)),
  };
}

describe("comparing two readings of a list", () => {
  test("finds every order gone, changed and new, whatever moved, in the order of each list", () => {
    fc.assert(
      fc.property(
        list.chain((earlier) => fc.tuple(fc.constant(earlier), laterOf(earlier))),
        ([earlier, later]) => {
          const differences = indexOf(earlier).differences(indexOf(later), 1000);
          const want = expected(earlier, later);
          assert.deepEqual(
            {
              vanished: differences.vanished.ids,
              changed: differences.changed.ids,
              appeared: differences.appeared.ids,
            },
            want,
          );
          assert.equal(differences.vanished.count, want.vanished.length);
          assert.equal(differences.appeared.count, want.appeared.length);
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("finds the few differences of two long readings, wherever they fall among the blocks compared whole", () => {
    const edits = fc.array(
      fc.record({ at: fc.nat({ max: 20_000 }), kind: fc.constantFrom("remove", "change", "insert", "move") }),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20_000 }), edits, (size, changes) => {
        const earlier = Array.from({ length: size }, (_, place): [bigint, number] => [
          BigInt(place * 3 + 1),
          place,
        ]);
        const later = earlier.map(([value, digest]): [bigint, number] => [value, digest]);
        // Each inserted order has an id of its own: a list with one id twice is judged apart (§2: unique).
        let inserted = 0;
        for (const { at, kind } of changes) {
          const place = at % Math.max(later.length, 1);
          if (kind === "insert") later.splice(place, 0, [BigInt((20_001 + inserted++) * 3 + 2), 1]);
          else if (later.length === 0) continue;
          else if (kind === "remove") later.splice(place, 1);
          else if (kind === "change") (later[place] as [bigint, number])[1] += 1;
          else later.push(...later.splice(place, 1));
        }
        const differences = indexOf(earlier).differences(indexOf(later), 100_000);
        const want = expected(earlier, later);
        assert.deepEqual(differences.vanished.ids, want.vanished);
        assert.deepEqual(differences.changed.ids, want.changed);
        assert.deepEqual(differences.appeared.ids, want.appeared);
      }),
      { numRuns: 200 },
    );
  });

  // The proxy compares a list with the last one of its view on its own thread: a step per order of two
  // million-order readings was a task that every other exchange waited for.
  test("passes over the same orders in the same order in blocks, with no step per order", () => {
    const orders = Array.from({ length: 100_000 }, (_, place): [bigint, number] => [
      BigInt(place + 1),
      place,
    ]);
    const earlier = indexOf(orders);
    const later = indexOf(orders);
    const hiAt = Int64Index.prototype.hiAt;
    let steps = 0;
    Int64Index.prototype.hiAt = function (this: Int64Index, place: number) {
      steps++;
      return hiAt.call(this, place);
    };
    try {
      let changes = 0;
      earlier.forEachChange(later, () => changes++);
      assert.equal(changes, 0);
    } finally {
      Int64Index.prototype.hiAt = hiAt;
    }
    assert.equal(steps, 0);
  });
});
