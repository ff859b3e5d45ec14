import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { halvesOfBigint } from "../../contract/int64-index.ts";
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
});
