import {
  exactInteger,
  INT64_MAX,
  INT64_MIN,
  isJsonNumber,
  isLosslessNumber,
  numberText,
} from "../contract/exact-json.ts";

/**
 * The orders of one list as later checks need them, and no more: each int64 id exactly, with a 64-bit digest
 * of its record. Held in typed arrays (about 24 bytes an order), so a run can keep several readings of a list
 * of millions of orders; looked up by open addressing on the id's two 32-bit halves.
 */
export class OrderIndex {
  #hi = new Int32Array(1024);
  #lo = new Int32Array(1024);
  #digestA = new Int32Array(1024);
  #digestB = new Int32Array(1024);
  /**
   * Slot → order index + 1 (0 is empty). Made only once an id arrives out of order: while ids ascend, as
   * most lists give them, an id is found by bisection and none can repeat.
   */
  #slots: Int32Array | undefined;
  #size = 0;
  #maxHi = 0;
  #maxLo = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds an order; returns false when its id is there already (the first one is kept). */
  add(hi: number, lo: number, digestA: number, digestB: number): boolean {
    const index = this.#size;
    if (index > 0 && compareHalves(hi, lo, this.#maxHi, this.#maxLo) <= 0) {
      // Out of order: from now on the ids are found by hashing rather than by bisection.
      if (this.#slots === undefined) this.#buildSlots();
      if ((index + 1) * 2 > (this.#slots as Int32Array).length) this.#grow();
      const slot = this.#find(hi, lo);
      if ((this.#slots as Int32Array)[slot] !== 0) return false;
      (this.#slots as Int32Array)[slot] = index + 1;
    } else {
      this.#maxHi = hi;
      this.#maxLo = lo;
      if (this.#slots !== undefined) {
        if ((index + 1) * 2 > this.#slots.length) this.#grow();
        this.#slots[this.#find(hi, lo)] = index + 1;
      }
    }
    this.#size++;
    if (index === this.#hi.length) this.#growEntries();
    this.#hi[index] = hi;
    this.#lo[index] = lo;
    this.#digestA[index] = digestA;
    this.#digestB[index] = digestB;
    return true;
  }

  /** Whether an id, as canonical digits, is listed. */
  has(id: string): boolean {
    const halves = halvesOfText(id);
    return halves !== undefined && this.#indexOf(halves.hi, halves.lo) !== -1;
  }

  /** Whether an order is listed with the same record in both lists (false when absent from either). */
  sameIn(other: OrderIndex, id: string): boolean {
    const halves = halvesOfText(id);
    if (halves === undefined) return false;
    const here = this.#indexOf(halves.hi, halves.lo);
    const there = other.#indexOf(halves.hi, halves.lo);
    return (
      here !== -1 &&
      there !== -1 &&
      this.#digestA[here] === other.#digestA[there] &&
      this.#digestB[here] === other.#digestB[there]
    );
  }

  /** The largest id, as canonical digits. */
  get largest(): bigint | undefined {
    return this.#size === 0 ? undefined : bigintOf(this.#maxHi, this.#maxLo);
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
    const note = (into: { count: number; ids: string[] }, hi: number, lo: number) => {
      const id = bigintOf(hi, lo).toString();
      if (ignore.has(id)) return;
      into.count++;
      if (into.ids.length < keep) into.ids.push(id);
    };
    for (let index = 0; index < this.#size; index++) {
      const hi = this.#hi[index] as number;
      const lo = this.#lo[index] as number;
      const there = later.#indexOf(hi, lo);
      if (there === -1) note(result.vanished, hi, lo);
      else if (
        this.#digestA[index] !== later.#digestA[there] ||
        this.#digestB[index] !== later.#digestB[there]
      )
        note(result.changed, hi, lo);
    }
    for (let index = 0; index < later.#size; index++) {
      const hi = later.#hi[index] as number;
      const lo = later.#lo[index] as number;
      if (this.#indexOf(hi, lo) === -1) note(result.appeared, hi, lo);
    }
    return result;
  }

  /** Every id, as canonical digits: for small lists and tests. */
  *ids(): IterableIterator<string> {
    for (let index = 0; index < this.#size; index++)
      yield bigintOf(this.#hi[index] as number, this.#lo[index] as number).toString();
  }

  #indexOf(hi: number, lo: number): number {
    if (this.#slots !== undefined) return (this.#slots[this.#find(hi, lo)] as number) - 1;
    let low = 0;
    let high = this.#size - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const order = compareHalves(this.#hi[middle] as number, this.#lo[middle] as number, hi, lo);
      if (order === 0) return middle;
      if (order < 0) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  #find(hi: number, lo: number): number {
    const slots = this.#slots as Int32Array;
    const mask = slots.length - 1;
    let slot = slotHash(hi, lo) & mask;
    for (;;) {
      const entry = slots[slot] as number;
      if (entry === 0 || (this.#hi[entry - 1] === hi && this.#lo[entry - 1] === lo)) return slot;
      slot = (slot + 1) & mask;
    }
  }

  #buildSlots(): void {
    let capacity = 1024;
    while (capacity < (this.#size + 1) * 2) capacity *= 2;
    this.#slots = new Int32Array(capacity / 2);
    this.#grow();
  }

  #grow(): void {
    const slots = new Int32Array((this.#slots as Int32Array).length * 2);
    const mask = slots.length - 1;
    for (let index = 0; index < this.#size; index++) {
      let slot = slotHash(this.#hi[index] as number, this.#lo[index] as number) & mask;
      while ((slots[slot] as number) !== 0) slot = (slot + 1) & mask;
      slots[slot] = index + 1;
    }
    this.#slots = slots;
  }

  #growEntries(): void {
    const grow = (array: Int32Array) => {
      const grown = new Int32Array(array.length * 2);
      grown.set(array);
      return grown;
    };
    this.#hi = grow(this.#hi);
    this.#lo = grow(this.#lo);
    this.#digestA = grow(this.#digestA);
    this.#digestB = grow(this.#digestB);
  }
}

export interface IndexDifferences {
  vanished: { count: number; ids: string[] };
  changed: { count: number; ids: string[] };
  appeared: { count: number; ids: string[] };
}

/** An int64 id as two signed 32-bit halves. */
export interface IdHalves {
  hi: number;
  lo: number;
}

const TWO_32 = 4294967296;

/**
 * An order's id as int64 halves, when it is a JSON integer within int64 (`1e3` is 1000); undefined for
 * anything else, which the Order schema fails anyway.
 */
export function idHalves(id: unknown): IdHalves | undefined {
  if (typeof id === "number") {
    if (id >= 0 && Number.isSafeInteger(id)) return { hi: Math.floor(id / TWO_32) | 0, lo: id | 0 };
    if (!Number.isSafeInteger(id)) return undefined;
    return halvesOfBigint(BigInt(id));
  }
  if (!isLosslessNumber(id)) return undefined;
  const integer = exactInteger(numberText(id as never));
  return integer === null || integer < INT64_MIN || integer > INT64_MAX ? undefined : halvesOfBigint(integer);
}

/** An id's canonical digits (`1e3` → "1000"); undefined when it is no int64 integer. */
export function canonicalId(id: unknown): string | undefined {
  if (!isJsonNumber(id)) return undefined;
  const halves = idHalves(id);
  return halves === undefined ? undefined : bigintOf(halves.hi, halves.lo).toString();
}

export function halvesOfText(id: string): IdHalves | undefined {
  if (!/^-?\d{1,19}$/.test(id)) return undefined;
  const value = BigInt(id);
  return value < INT64_MIN || value > INT64_MAX ? undefined : halvesOfBigint(value);
}

function halvesOfBigint(value: bigint): IdHalves {
  return { hi: Number(BigInt.asIntN(32, value >> 32n)), lo: Number(BigInt.asIntN(32, value)) };
}

export function bigintOf(hi: number, lo: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo >>> 0);
}

function compareHalves(hi: number, lo: number, otherHi: number, otherLo: number): number {
  if (hi !== otherHi) return hi < otherHi ? -1 : 1;
  const a = lo >>> 0;
  const b = otherLo >>> 0;
  return a === b ? 0 : a < b ? -1 : 1;
}

function slotHash(hi: number, lo: number): number {
  let hash = Math.imul(lo, 0x9e3779b1) ^ Math.imul(hi, 0x85ebca6b);
  hash ^= hash >>> 15;
  return Math.imul(hash, 0x2c1b3c6d) ^ (hash >>> 13);
}
