import { INT64_MAX, INT64_MIN } from "./exact-json.ts";

/**
 * int64 ids in the order they were added, each found again by its value: two 32-bit halves an id in typed
 * arrays (8 bytes, a hash slot or none), so an index of millions of ids is a few typed arrays rather than
 * millions of objects for the garbage collector. While ids arrive in ascending order, as most lists and
 * fixtures give them, they are found by bisection and no hash table is made at all.
 */
export class Int64Index {
  /**
   * Keys of this index's hash, drawn at random for each index: ids chosen to collide under one index's hash
   * spread out under another's, so no list (a stranger's or an upstream's) can make finding ids quadratic.
   * Drawn with the table, so that an index of ascending ids (and a start on such fixtures) never asks the
   * system for randomness.
   */
  #seed: HashSeed = UNDRAWN;
  /** Slots looked at by lookups and inserts: what an adversarial list would make grow past linear. */
  #probes = 0;
  #hi: Int32Array = new Int32Array(1024);
  #lo: Int32Array = new Int32Array(1024);
  /** From slot to place + 1 (0 is empty); made once an id arrives out of order. */
  #slots: Int32Array | undefined;
  /**
   * Places not yet in `#slots`, moved into it a few at each add, so that no add ever rehashes millions of
   * ids at once (a pause of tens of milliseconds per million, which a proxy's other exchanges would wait
   * for). Until they are moved, they are found in `#oldSlots`, or by bisection of the ascending ids
   * `[0, #pendingTo)` when the table was first made.
   */
  #pendingFrom = 0;
  #pendingTo = 0;
  #oldSlots: Int32Array | undefined;
  #size = 0;
  #maxHi = 0;
  #maxLo = 0;

  get size(): number {
    return this.#size;
  }

  /** Bytes of its arrays: their whole capacity, and a table being moved out of while it is. */
  get bytes(): number {
    return (
      this.#hi.byteLength +
      this.#lo.byteLength +
      (this.#slots?.byteLength ?? 0) +
      (this.#oldSlots?.byteLength ?? 0)
    );
  }

  /** Hash slots looked at so far, for tests and benchmarks of the work an input costs. */
  get probes(): number {
    return this.#probes;
  }

  /** Adds an id at the next place and returns that place; or, when the id is there already, -1 - its place. */
  add(hi: number, lo: number): number {
    const place = this.#size;
    if (place > 0 && compareHalves(hi, lo, this.#maxHi, this.#maxLo) <= 0) {
      if (this.#slots === undefined) this.#startSlots();
      const existing = this.placeOf(hi, lo);
      if (existing !== -1) return -1 - existing;
    } else {
      this.#maxHi = hi;
      this.#maxLo = lo;
    }
    if (this.#slots !== undefined && (place + 1) * 2 > this.#slots.length) this.#grow();
    this.#size++;
    if (place === this.#hi.length) {
      this.#hi = grown(this.#hi);
      this.#lo = grown(this.#lo);
    }
    this.#hi[place] = hi;
    this.#lo[place] = lo;
    if (this.#slots !== undefined) {
      this.#insert(this.#slots, place);
      this.#movePending(MOVED_PER_ADD);
    }
    return place;
  }

  /** The place of an id, or -1. */
  placeOf(hi: number, lo: number): number {
    if (this.#slots === undefined) return this.#bisect(hi, lo, this.#size);
    const found = (this.#slots[this.#probe(this.#slots, hi, lo)] as number) - 1;
    if (found !== -1 || this.#pendingFrom === this.#pendingTo) return found;
    if (this.#oldSlots === undefined) return this.#bisect(hi, lo, this.#pendingTo);
    return (this.#oldSlots[this.#probe(this.#oldSlots, hi, lo)] as number) - 1;
  }

  /** The place of an id given as canonical digits, or -1 (also for text that is no int64). */
  placeOfText(id: string): number {
    const halves = halvesOfText(id);
    return halves === undefined ? -1 : this.placeOf(halves.hi, halves.lo);
  }

  hiAt(place: number): number {
    return this.#hi[place] as number;
  }

  loAt(place: number): number {
    return this.#lo[place] as number;
  }

  /** The ids' halves from `place` on, `count` of them, as views of the index's own arrays (read only). */
  halvesAt(place: number, count: number): { hi: Int32Array; lo: Int32Array } {
    return { hi: this.#hi.subarray(place, place + count), lo: this.#lo.subarray(place, place + count) };
  }

  /** The id at a place, as canonical digits. */
  textAt(place: number): string {
    return bigintOf(this.#hi[place] as number, this.#lo[place] as number).toString();
  }

  /** The largest id. */
  get largest(): bigint | undefined {
    return this.#size === 0 ? undefined : bigintOf(this.#maxHi, this.#maxLo);
  }

  /**
   * The index as it stands (its arrays, its table with every id moved in, and its keys), for another
   * thread to take over as they are: finding a million ids again there is then no work at all. The arrays
   * go with the parts, and this index is not used after.
   */
  parts(): Int64IndexParts {
    if (this.#slots !== undefined) this.#movePending(this.#pendingTo - this.#pendingFrom);
    return {
      hi: this.#hi,
      lo: this.#lo,
      size: this.#size,
      ...(this.#slots === undefined ? {} : { slots: this.#slots, seed: [this.#seed.lo, this.#seed.hi] }),
      largest: [this.#maxHi, this.#maxLo],
    };
  }

  /** The index `parts` gave, with its arrays and table as they are. */
  static fromParts(parts: Int64IndexParts): Int64Index {
    const index = new Int64Index();
    index.#hi = parts.hi;
    index.#lo = parts.lo;
    index.#size = parts.size;
    [index.#maxHi, index.#maxLo] = parts.largest;
    if (parts.slots !== undefined && parts.seed !== undefined) {
      index.#slots = parts.slots;
      index.#seed = { lo: parts.seed[0], hi: parts.seed[1] };
    }
    return index;
  }

  /** The place of an id among the first `count`, which are ascending. */
  #bisect(hi: number, lo: number, count: number): number {
    let low = 0;
    let high = count - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const order = compareHalves(this.#hi[middle] as number, this.#lo[middle] as number, hi, lo);
      if (order === 0) return middle;
      if (order < 0) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  /** The slot holding an id, or the empty slot where it would go. */
  #probe(slots: Int32Array, hi: number, lo: number): number {
    const mask = slots.length - 1;
    let slot = slotHash(this.#seed, hi, lo) & mask;
    for (;;) {
      this.#probes++;
      const entry = slots[slot] as number;
      if (entry === 0 || (this.#hi[entry - 1] === hi && this.#lo[entry - 1] === lo)) return slot;
      slot = (slot + 1) & mask;
    }
  }

  #insert(slots: Int32Array, place: number): void {
    const mask = slots.length - 1;
    let slot = slotHash(this.#seed, this.#hi[place] as number, this.#lo[place] as number) & mask;
    for (;;) {
      this.#probes++;
      if ((slots[slot] as number) === 0) break;
      slot = (slot + 1) & mask;
    }
    slots[slot] = place + 1;
  }

  /** The first id out of order: a table with room for as many again, the ascending ids moved in bit by bit. */
  #startSlots(): void {
    let capacity = 1024;
    while (capacity < this.#size * 4) capacity *= 2;
    this.#slots = new Int32Array(capacity);
    if (this.#seed === UNDRAWN) this.#seed = randomSeed();
    this.#pendingFrom = 0;
    this.#pendingTo = this.#size;
    this.#oldSlots = undefined;
  }

  #grow(): void {
    // A table twice as large is half as full as this one was: its ids move in before it fills again.
    this.#movePending(this.#pendingTo - this.#pendingFrom);
    this.#oldSlots = this.#slots;
    this.#slots = new Int32Array((this.#oldSlots as Int32Array).length * 2);
    this.#pendingFrom = 0;
    this.#pendingTo = this.#size;
  }

  #movePending(count: number): void {
    const end = Math.min(this.#pendingTo, this.#pendingFrom + count);
    const slots = this.#slots as Int32Array;
    for (let place = this.#pendingFrom; place < end; place++) this.#insert(slots, place);
    this.#pendingFrom = end;
    if (end === this.#pendingTo) this.#oldSlots = undefined;
  }
}

/** An index's arrays as `Int64Index#parts` gives them: structured-clone friendly, its arrays transferable. */
export interface Int64IndexParts {
  hi: Int32Array;
  lo: Int32Array;
  size: number;
  /** The hash table and its keys, when ids came out of order. */
  slots?: Int32Array;
  seed?: [lo: number, hi: number];
  /** The largest id's halves. */
  largest: [hi: number, lo: number];
}

// Ids moved into a new table at each add: four a time empties a table's backlog in a quarter of the adds
// before it must grow again.
const MOVED_PER_ADD = 4;

/** An int64 id as two signed 32-bit halves. */
export interface IdHalves {
  hi: number;
  lo: number;
}

const TWO_32 = 4294967296;

/** The halves of an integer that is a safe JS number (the common case: no bigint is made). */
export function halvesOfNumber(id: number): IdHalves {
  return id >= 0 ? { hi: Math.floor(id / TWO_32) | 0, lo: id | 0 } : halvesOfBigint(BigInt(id));
}

export function halvesOfBigint(value: bigint): IdHalves {
  return { hi: Number(BigInt.asIntN(32, value >> 32n)), lo: Number(BigInt.asIntN(32, value)) };
}

/** The halves of canonical int64 digits; undefined for any other text. */
export function halvesOfText(id: string): IdHalves | undefined {
  if (!/^-?\d{1,19}$/.test(id)) return undefined;
  if (id.length <= 15) return halvesOfNumber(Number(id));
  const value = BigInt(id);
  return value < INT64_MIN || value > INT64_MAX ? undefined : halvesOfBigint(value);
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

interface HashSeed {
  readonly lo: number;
  readonly hi: number;
}

/** No table, so no keys yet: never hashed with. */
const UNDRAWN: HashSeed = { lo: 0, hi: 0 };

function randomSeed(): HashSeed {
  // Web Crypto is in Node and in browsers alike (the browser build indexes fixtures with this too).
  const words = globalThis.crypto.getRandomValues(new Int32Array(2));
  return { lo: words[0] as number, hi: words[1] as number };
}

/**
 * A keyed hash of an id's halves: each half passes, xored with its key, through MurmurHash3's finaliser
 * (a bijection whose every input bit reaches every output bit), the first half's result feeding the
 * second. Which ids collide thus depends on keys an attacker does not know, where a fixed hash lets one
 * list of colliding ids be written once and sent everywhere; unlike MurmurHash3's block function, no xor
 * difference passes through the finaliser with certainty, so no pair collides under every key either.
 */
function slotHash(seed: HashSeed, hi: number, lo: number): number {
  return finalMix(finalMix(lo ^ seed.lo) ^ hi ^ seed.hi);
}

function finalMix(value: number): number {
  let hash = value ^ (value >>> 16);
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

/** A typed array of twice the length holding the same values. */
export function grown(array: Int32Array): Int32Array {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}
