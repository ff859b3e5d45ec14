import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { bigintOf, halvesOfBigint, Int64Index } from "../int64-index.ts";

// Runs of ascending ids (bisection, no table), then ids out of order (a table, moved in bit by bit and
// grown several times), repeats, and ids across the int64 range.
const step = fc.oneof(
  { weight: 6, arbitrary: fc.record({ ascending: fc.integer({ min: 1, max: 3000 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({ random: fc.array(fc.bigInt({ min: -5000n, max: 5000n }), { maxLength: 3000 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ extreme: fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n) }),
  },
);

describe("the int64 index", () => {
  test("finds every id at the place it was added, and refuses each repeat with that place, across growth", () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 6 }),
        fc.array(fc.bigInt({ min: -6000n, max: 20000n }), { maxLength: 50 }),
        (steps, probes) => {
          const index = new Int64Index();
          const places = new Map<bigint, number>();
          let next = 10_000n;
          const add = (id: bigint) => {
            const { hi, lo } = halvesOfBigint(id);
            const place = index.add(hi, lo);
            const known = places.get(id);
            if (known !== undefined) assert.equal(place, -1 - known, `repeat of ${id}`);
            else {
              assert.equal(place, places.size, `new id ${id}`);
              places.set(id, place);
            }
          };
          for (const taken of steps) {
            if ("ascending" in taken) for (let k = 0; k < taken.ascending; k++) add(next++);
            else if ("random" in taken) for (const id of taken.random) add(id);
            else add(taken.extreme);
          }
          assert.equal(index.size, places.size);
          for (const [id, place] of places) {
            const { hi, lo } = halvesOfBigint(id);
            assert.equal(index.placeOf(hi, lo), place, `place of ${id}`);
            assert.equal(bigintOf(index.hiAt(place), index.loAt(place)), id);
          }
          for (const id of probes) {
            const { hi, lo } = halvesOfBigint(id);
            assert.equal(index.placeOf(hi, lo), places.get(id) ?? -1, `probe ${id}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
