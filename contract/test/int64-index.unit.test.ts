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

  test("taken over from its parts across a thread, finds every id at its place and goes on adding as before", () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 6 }),
        fc.array(fc.bigInt({ min: -6000n, max: 20000n }), { maxLength: 200 }),
        (steps, later) => {
          const original = new Int64Index();
          const ids: bigint[] = [];
          let next = 10_000n;
          const add = (index: Int64Index, id: bigint) => {
            const { hi, lo } = halvesOfBigint(id);
            if (index.add(hi, lo) >= 0) ids.push(id);
          };
          for (const taken of steps) {
            if ("ascending" in taken) for (let k = 0; k < taken.ascending; k++) add(original, next++);
            else if ("random" in taken) for (const id of taken.random) add(original, id);
            else add(original, taken.extreme);
          }
          const parts = original.parts();
          const buffers = [parts.hi, parts.lo, ...(parts.slots ? [parts.slots] : [])].map((a) => a.buffer);
          const index = Int64Index.fromParts(structuredClone(parts, { transfer: buffers }));
          for (const id of later) add(index, id);
          assert.equal(index.size, ids.length);
          for (const [place, id] of ids.entries()) {
            const { hi, lo } = halvesOfBigint(id);
            assert.equal(index.placeOf(hi, lo), place, `place of ${id}`);
          }
          if (ids.length > 0)
            assert.equal(
              index.largest,
              ids.reduce((a, b) => (a > b ? a : b)),
            );
        },
      ),
      { numRuns: 200 },
    );
  });
});

/**
 * Ids that all share one hash under a fixed, unkeyed hash of the halves (the index's hash before it was
 * keyed): for any hi, the lo that makes `lo·A xor hi·B` one chosen value. A list of them made every lookup
 * walk all the ids before it.
 */
function idsCollidingUnderAFixedHash(count: number): bigint[] {
  const A = 0x9e3779b1;
  const B = 0x85ebca6b;
  // The inverse of A modulo 2^32, by Newton's iteration (A is odd).
  let inverse = A;
  for (let round = 0; round < 5; round++) inverse = Math.imul(inverse, 2 - Math.imul(A, inverse));
  const ids: bigint[] = [];
  for (let hi = count; hi > 0; hi--) {
    const lo = Math.imul(0x12345678 ^ Math.imul(hi, B), inverse);
    ids.push(bigintOf(hi, lo));
  }
  return ids;
}

describe("the int64 index under adversarial ids", () => {
  test("the crafted ids really collide under the fixed hash", () => {
    const ids = idsCollidingUnderAFixedHash(100);
    const firstStage = (id: bigint) => {
      const { hi, lo } = halvesOfBigint(id);
      return (Math.imul(lo, 0x9e3779b1) ^ Math.imul(hi, 0x85ebca6b)) >>> 0;
    };
    assert.equal(new Set(ids.map(firstStage)).size, 1);
  });

  test("ids crafted to collide cost about as many probes as ordinary ids of the same count", () => {
    const count = 20_000;
    const probesFor = (ids: readonly bigint[]) => {
      const index = new Int64Index();
      for (const id of ids) {
        const { hi, lo } = halvesOfBigint(id);
        index.add(hi, lo);
      }
      for (const id of ids) {
        const { hi, lo } = halvesOfBigint(id);
        assert.notEqual(index.placeOf(hi, lo), -1);
      }
      return index.probes;
    };
    // Both descending, so that both go through the hash table rather than bisection.
    const crafted = probesFor(idsCollidingUnderAFixedHash(count));
    const ordinary = probesFor(Array.from({ length: count }, (_, index) => BigInt(count - index) * 7919n));
    assert.ok(crafted < 10 * count, `crafted ids took ${crafted} probes for ${count} ids`);
    assert.ok(crafted < 3 * ordinary, `crafted ${crafted} probes, ordinary ${ordinary}`);
  });
});
