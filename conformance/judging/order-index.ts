import {
  exactInteger,
  INT64_MAX,
  INT64_MIN,
  isLosslessNumber,
  numberText,
} from "../../contract/exact-json.ts";
import {
  grown,
  halvesOfBigint,
  halvesOfNumber,
  type IdHalves,
  Int64Index,
  type Int64IndexParts,
} from "../../contract/int64-index.ts";

/**
 * The orders of one list as later checks need them, and no more: each int64 id exactly, with a 64-bit digest
 * of its record, in typed arrays (about 24 bytes an order), so a run can keep several readings of a list of
 * millions of orders.
 */
export class OrderIndex {
  #ids = new Int64Index();
  #digestA: Int32Array = new Int32Array(1024);
  #digestB: Int32Array = new Int32Array(1024);

  get size(): number {
    return this.#ids.size;
  }

  /** Bytes of its arrays as allocated (each grows to twice its length when full), not as filled. */
  get bytes(): number {
    return this.#ids.bytes + this.#digestA.byteLength + this.#digestB.byteLength;
  }

  /** Adds an order; returns false when its id is there already (the first one is kept). */
  add(hi: number, lo: number, digestA: number, digestB: number): boolean {
    const place = this.#ids.add(hi, lo);
    if (place < 0) return false;
    if (place === this.#digestA.length) {
      this.#digestA = grown(this.#digestA);
      this.#digestB = grown(this.#digestB);
    }
    this.#digestA[place] = digestA;
    this.#digestB[place] = digestB;
    return true;
  }

  /** Whether an id, as canonical digits, is listed. */
  has(id: string): boolean {
    return this.#ids.placeOfText(id) !== -1;
  }

  /** Whether an order is listed with the same record in both lists (false when absent from either). */
  sameIn(other: OrderIndex, id: string): boolean {
    const here = this.#ids.placeOfText(id);
    const there = other.#ids.placeOfText(id);
    return here !== -1 && there !== -1 && this.#sameDigest(here, other, there);
  }

  /** The digest of a listed order's record, as text to tell records apart by; undefined when not listed. */
  recordDigest(id: string): string | undefined {
    const place = this.#ids.placeOfText(id);
    return place === -1 ? undefined : `${this.#digestA[place]}:${this.#digestB[place]}`;
  }

  /** The largest id. */
  get largest(): bigint | undefined {
    return this.#ids.largest;
  }

  /**
   * How this list differs from a later one: orders gone from it, orders whose record changed, orders new
   * in it. Counts in full, ids of the first `keep` of each; `ignore` ids are left out.
   */
  differences(later: OrderIndex, keep: number, ignore: ReadonlySet<string> = new Set()): IndexDifferences {
    const result: IndexDifferences = {
      vanished: { count: 0, ids: [] },
      changed: { count: 0, ids: [] },
      appeared: { count: 0, ids: [] },
    };
    const note = (into: { count: number; ids: string[] }, id: string) => {
      if (ignore.has(id)) return;
      into.count++;
      if (into.ids.length < keep) into.ids.push(id);
    };
    this.forEachChange(later, (kind, id) => note(result[kind], id));
    later.#forEachPlaceIn(this, false, (place, there) => {
      if (there === -1) note(result.appeared, later.#ids.textAt(place));
    });
    return result;
  }

  /** Each order of this list that a later one no longer lists, or lists with another record. */
  forEachChange(later: OrderIndex, visit: (kind: "vanished" | "changed", id: string) => void): void {
    this.#forEachPlaceIn(later, true, (place, there) => {
      if (there === -1) visit("vanished", this.#ids.textAt(place));
      else if (!this.#sameDigest(place, later, there)) visit("changed", this.#ids.textAt(place));
    });
  }

  /**
   * Each of this list's places with the place of the same id in another list (-1: not there), but for
   * blocks where both hold the same ids (and with `sameRecords`, the same records) in the same order, which
   * are compared as bytes and passed over. Two readings of one list mostly hold the same ids in the same
   * order, so the other list is walked alongside, block by block, and looked up only where the two part (an
   * order gone, one new, a reordering): a million orders compared in a few memory comparisons rather than
   * a step each.
   */
  #forEachPlaceIn(
    other: OrderIndex,
    sameRecords: boolean,
    visit: (place: number, there: number) => void,
  ): void {
    const mine = this.#ids;
    const theirs = other.#ids;
    let next = 0;
    let block = SAME_BLOCK_PLACES;
    for (let place = 0; place < mine.size; ) {
      const count = Math.min(block, mine.size - place, theirs.size - next);
      if (count > 0 && this.#sameBlock(place, other, next, count, sameRecords)) {
        place += count;
        next += count;
        // A long run of the same orders is compared in ever larger blocks, each comparison costing a call.
        block = Math.min(block * 2, LARGEST_SAME_BLOCK_PLACES);
        continue;
      }
      block = SAME_BLOCK_PLACES;
      for (const end = place + Math.max(count, 1); place < end; place++) {
        const hi = mine.hiAt(place);
        const lo = mine.loAt(place);
        let there: number;
        if (next < theirs.size && theirs.hiAt(next) === hi && theirs.loAt(next) === lo) there = next;
        else there = theirs.placeOf(hi, lo);
        if (there !== -1) next = there + 1;
        visit(place, there);
      }
    }
  }

  /** Whether `count` places from `place` on hold the same ids as `other`'s from `there` (and the same records). */
  #sameBlock(place: number, other: OrderIndex, there: number, count: number, sameRecords: boolean): boolean {
    const mine = this.#ids.halvesAt(place, count);
    const theirs = other.#ids.halvesAt(there, count);
    const same = (a: Int32Array, b: Int32Array) =>
      Buffer.compare(
        new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
        new Uint8Array(b.buffer, b.byteOffset, b.byteLength),
      ) === 0;
    if (!same(mine.hi, theirs.hi) || !same(mine.lo, theirs.lo)) return false;
    if (!sameRecords) return true;
    const end = place + count;
    const otherEnd = there + count;
    return (
      same(this.#digestA.subarray(place, end), other.#digestA.subarray(there, otherEnd)) &&
      same(this.#digestB.subarray(place, end), other.#digestB.subarray(there, otherEnd))
    );
  }

  /**
   * The index as typed arrays (ids' halves, their hash table, digests), which a worker thread can hand over
   * without copying; `fromParts` takes them over as they are, so the receiving thread does no work per
   * order. The arrays go with the parts, and this index is not used after.
   */
  parts(): OrderIndexParts {
    return { ids: this.#ids.parts(), digestA: this.#digestA, digestB: this.#digestB };
  }

  static fromParts(parts: OrderIndexParts): OrderIndex {
    const index = new OrderIndex();
    index.#ids = Int64Index.fromParts(parts.ids);
    index.#digestA = parts.digestA;
    index.#digestB = parts.digestB;
    return index;
  }

  /** Every id, as canonical digits: for small lists and tests. */
  *ids(): IterableIterator<string> {
    for (let place = 0; place < this.#ids.size; place++) yield this.#ids.textAt(place);
  }

  #sameDigest(place: number, other: OrderIndex, there: number): boolean {
    return this.#digestA[place] === other.#digestA[there] && this.#digestB[place] === other.#digestB[there];
  }
}

// Places compared at once, as bytes, by `#forEachPlaceIn`: where two lists part, the block they part in is
// walked a place at a time, so blocks start small there and grow while the lists go on alike.
const SAME_BLOCK_PLACES = 256;
const LARGEST_SAME_BLOCK_PLACES = 65_536;

export interface OrderIndexParts {
  ids: Int64IndexParts;
  digestA: Int32Array;
  digestB: Int32Array;
}

/** The buffers of an index's parts, to be transferred rather than copied. */
export function partsBuffers(parts: OrderIndexParts): ArrayBuffer[] {
  const { ids, digestA, digestB } = parts;
  const arrays = [ids.hi, ids.lo, ...(ids.slots ? [ids.slots] : []), digestA, digestB];
  return arrays.map((array) => array.buffer as ArrayBuffer);
}

export interface IndexDifferences {
  vanished: { count: number; ids: string[] };
  changed: { count: number; ids: string[] };
  appeared: { count: number; ids: string[] };
}

/**
 * An order's id as int64 halves, when it is a JSON integer within int64 (`1e3` is 1000); undefined for
 * anything else, which the Order schema fails anyway.
 */
export function idHalves(id: unknown): IdHalves | undefined {
  if (typeof id === "number") return Number.isSafeInteger(id) ? halvesOfNumber(id) : undefined;
  if (!isLosslessNumber(id)) return undefined;
  const integer = exactInteger(numberText(id as never));
  return integer === null || integer < INT64_MIN || integer > INT64_MAX ? undefined : halvesOfBigint(integer);
}
