import type { ValidateFunction } from "ajv";
import { notUtf8 } from "../../common/utf8.ts";
import { Utf8Stream } from "../../common/utf8-stream.ts";
import { isJsonNumber, isRecord, numberText, stringifyExact } from "../../contract/exact-json.ts";
import { validateExact } from "../../contract/exact-validate.ts";
import {
  FieldShape,
  type FlatFields,
  type FlatRecordPlan,
  KIND_FALSE,
  KIND_LONG_INTEGER,
  KIND_NUMBER,
  KIND_STRING,
  KIND_TRUE,
  longIntegerWithinInt64,
} from "../../contract/flat-record.ts";
import { bigintOf, halvesOfNumber, halvesOfText, type IdHalves } from "../../contract/int64-index.ts";
import {
  JsonStream,
  JsonStreamError,
  type MemoryAccount,
  type ReaderLimit,
} from "../../contract/json-stream.ts";
import { idHalves, OrderIndex } from "./order-index.ts";

/** Problems of one kind: the first few in full, all of them counted. */
export interface ProblemTally {
  count: number;
  first: string[];
}

/** A value of each kind a JSON root can begin as, by its first character: what a cut text stands for. */
const ROOT_OF_KIND: Record<string, unknown> = {
  "{": {},
  '"': "",
  t: true,
  f: false,
  n: null,
};

/**
 * What a body whose root's first byte is `first` (undefined: none came) says it is when that is no array:
 * its kind's stand-in value, for the schema check to name it.
 */
export function rootNotArray(first: number | undefined): Pick<ListVerdict, "notArray"> {
  if (first === undefined || first === 0x5b) return {};
  return { notArray: { value: ROOT_OF_KIND[String.fromCharCode(first)] ?? 0 } };
}

/** What a listOrders body showed, judged order by order as it arrived. */
export interface ListVerdict {
  /** Bytes judged. */
  bytes: number;
  /** The body is not JSON: why, naming the byte. */
  syntax?: string;
  /**
   * The body went past a bound of the judge's reader (nesting, a string's or a number's length), which
   * JSON itself does not set: the list is not judged, and nothing is said of it.
   */
  limit?: ReaderLimit & { offset: number };
  /** The body is JSON but not an array: its value, for the schema check to name what it is. */
  notArray?: { value: unknown };
  /** Orders in the array. */
  count: number;
  /** Orders that fail the Order schema: `orders[3] (id 4): quantity must be integer`. */
  invalid: ProblemTally;
  /** Ids listed more than once. */
  duplicates: ProblemTally;
  /** Orders with a `status` field, by id. */
  exposingStatus: ProblemTally;
  /** Orders whose id is no int64 integer: the list cannot be understood whole by id. */
  unindexed: number;
  /** Each listed order once, by exact id, with a digest of its record. */
  orders: OrderIndex;
  /** How many times ids beyond their first listing were seen, by canonical id (only repeated ids). */
  repeats: ReadonlyMap<string, number>;
  /**
   * Records as sorted-field JSON with exact numbers, by canonical id: of the watched ids, or of every order
   * when the list has at most `keepRecordsUpTo` orders.
   */
  records: ReadonlyMap<string, string>;
  /** Whether `records` holds every indexed order. */
  allRecords: boolean;
  /**
   * Set when the list had more orders than the judge may index (`maxIndexedOrders`): only the first this
   * many are in `orders`, so neither uniqueness nor the list as a whole can be judged.
   */
  indexLimit?: number;
  /**
   * The bytes around the first order found at fault (from 256 bytes before it, 2 KiB in all), with the
   * offset they start at: what a report shows of a list, rather than its first bytes.
   */
  excerpt?: { from: number; text: string };
  /**
   * Set when only the start of the list was judged (the proxy's judge fell behind past its memory): why,
   * and how far. What was found there stands; nothing may be said of the whole list.
   */
  partial?: string;
}

export interface ListJudgeOptions {
  /** The Order schema's validator (fed values whose numbers are projected for int64). */
  validateOrder: ValidateFunction;
  /**
   * The Order schema's verdict on flat orders read from their bytes (`flatRecordPlan`): orders it finds
   * valid are judged with no object made; anything else goes to `validateOrder`.
   */
  orderPlan?: FlatRecordPlan | undefined;
  /** Ids (canonical digits) whose records are kept whole for messages. */
  watch?: ReadonlySet<string>;
  /**
   * Judge the watched orders only (explore's reading: its model needs no more): of every other order, only
   * that it is an object with an exact int64 id, with no schema check and no digest. `orders`, `records`
   * and the problem tallies then hold the watched orders alone; `count` and `unindexed` still count all.
   */
  watchedOnly?: boolean;
  /** Problems of each kind kept in full (default 10). */
  keep?: number;
  /**
   * Orders whose ids are indexed at most (default: no bound): the index costs about 32 bytes an order, and a
   * list past this is judged order by order, its uniqueness and its state left unjudged (`indexLimit`).
   */
  maxIndexedOrders?: number;
  /** Keep every order's record while the list has at most this many (default 0): small lists, compared in full. */
  keepRecordsUpTo?: number;
  /**
   * …and while the records kept come to at most this many characters (default 4 Mi): a list of a few
   * orders with huge fields is kept as ids and digests, as a long list is.
   */
  keepRecordChars?: number;
  maxDepth?: number;
  maxStringBytes?: number;
  maxNumberChars?: number;
  /**
   * The account the reader takes from before it makes what grows with the text (a long string, an order
   * being built), and the judge before it keeps a record or a repeated id until the verdict: an order or a
   * repeated id that needs more than is left stops the judging there, the list judged in part; records
   * past it leave the list kept as ids and digests. What is kept is given back at the verdict.
   */
  memory?: MemoryAccount;
}

const DEFAULT_KEEP = 10;
// What a report shows of a list around its first fault: a little before the order, and the order on.
const EXCERPT_BEFORE = 256;
const EXCERPT_SPAN = 2048;
// Bytes kept from before the chunk being judged, for an excerpt whose order began in an earlier one.
const EXCERPT_HISTORY = 2 * EXCERPT_SPAN;
const DEFAULT_KEEP_RECORD_CHARS = 4 * 1024 * 1024;
// What a kept record or a repeated id costs beside its characters (two bytes each at most): the map's entry
// and the strings' headers.
const KEPT_ENTRY_BYTES = 64;
const DESCRIBED_CHARS = 60;

/**
 * A listOrders body judged as its bytes arrive: each Order against the schema with its formats, int64 ids
 * exact and unique, no status field. What later checks compare is kept compactly (ids and digests), so the
 * memory a list costs does not grow with its text; no body is ever held whole.
 */
export class ListJudge {
  readonly #validate: ValidateFunction;
  readonly #plan: FlatRecordPlan | undefined;
  readonly #watch: ReadonlySet<string>;
  readonly #watchedOnly: boolean;
  /** Watched-only: the watched orders found, as (hi, lo, digestA, digestB) quads, indexed at the end. */
  readonly #watchedFound: number[] = [];
  /** A flat order's digest, written by flatDigest. */
  readonly #digest = new Int32Array(2);
  /** The watched ids' low halves: most orders are passed over by one look-up of a number. */
  readonly #watchLows = new Set<number>();
  readonly #keep: number;
  readonly #stream: JsonStream;
  readonly #orders = new OrderIndex();
  readonly #invalid: ProblemTally = { count: 0, first: [] };
  readonly #duplicates: ProblemTally = { count: 0, first: [] };
  readonly #exposing: ProblemTally = { count: 0, first: [] };
  readonly #repeats = new Map<string, number>();
  readonly #records = new Map<string, string>();
  #unindexed = 0;
  #exactBefore = 0;
  readonly #keepRecordsUpTo: number;
  readonly #maxIndexed: number;
  /** Orders judged so far, for a verdict on the part of a list that was judged. */
  #seen = 0;
  #indexFull = false;
  readonly #keepRecordChars: number;
  #recordChars = 0;
  #allRecords: boolean;
  /** Why reading stopped: the body is not JSON, or (with `#limit`) went past a bound of the reader. */
  #syntax: string | undefined;
  #limit: (ReaderLimit & { offset: number }) | undefined;
  /** Why the judging stopped short of the list's end, the reader having found no room in the account. */
  #overBudget: string | undefined;
  readonly #memory: MemoryAccount | undefined;
  /** What the records and repeated ids kept until the verdict took from the account (`memory`). */
  #keptCharged = 0;
  #bytes = 0;
  readonly #utf8 = new Utf8Stream();
  /** Where the first order at fault began, once one is; and the bytes kept around it. */
  #faultAt: number | undefined;
  #excerpt: { from: number; text: string } | undefined;
  /** The bytes before the chunk being judged, for a fault whose order began in an earlier one. */
  #lastTail: Uint8Array = new Uint8Array(0);
  /** The excerpt's bytes while it is still gathered, and where they start. */
  #excerptBytes: Buffer | undefined;
  #excerptFrom = 0;
  /** Per shape of flat order: its keys' hashes, where its id is, whether it has a status field. */
  readonly #shape = new FieldShape(flatShapeOf);

  constructor(options: ListJudgeOptions) {
    this.#validate = options.validateOrder;
    this.#plan = options.orderPlan;
    this.#watch = options.watch ?? new Set();
    this.#watchedOnly = options.watchedOnly ?? false;
    for (const id of this.#watch) {
      const halves = halvesOfText(id);
      if (halves) this.#watchLows.add(halves.lo);
    }
    this.#keep = options.keep ?? DEFAULT_KEEP;
    this.#keepRecordsUpTo = options.keepRecordsUpTo ?? 0;
    this.#maxIndexed = options.maxIndexedOrders ?? Number.POSITIVE_INFINITY;
    this.#keepRecordChars = options.keepRecordChars ?? DEFAULT_KEEP_RECORD_CHARS;
    this.#allRecords = this.#keepRecordsUpTo > 0;
    this.#memory = options.memory;
    this.#stream = new JsonStream({
      onElement: (value, index) => this.#judgeOrder(value, index),
      ...(this.#plan || this.#watchedOnly
        ? { onFlatElement: (fields: FlatFields) => this.#judgeFlatOrder(fields) }
        : {}),
      ...(this.#watchedOnly ? { flatLongIntegers: true } : {}),
      ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
      ...(options.maxStringBytes !== undefined ? { maxStringBytes: options.maxStringBytes } : {}),
      ...(options.maxNumberChars !== undefined ? { maxNumberChars: options.maxNumberChars } : {}),
      ...(options.memory !== undefined ? { memory: options.memory } : {}),
    });
  }

  /** Orders indexed so far (each costs the index about INDEXED_ORDER_BYTES). */
  get indexedOrders(): number {
    return this.#orders.size;
  }

  /** What the id index's arrays take, as allocated. */
  get indexBytes(): number {
    return this.#orders.bytes;
  }

  write(chunk: Uint8Array): void {
    this.#bytes += chunk.length;
    if (this.#syntax !== undefined || this.#overBudget !== undefined) return;
    const notText = this.#utf8.write(chunk);
    if (notText !== -1) {
      this.#syntax = notUtf8(notText, chunk[notText - (this.#bytes - chunk.length)]);
      return;
    }
    try {
      this.#stream.write(chunk);
    } catch (error) {
      this.#stop(error);
    }
    if (this.#excerpt !== undefined || (this.#watchedOnly && this.#faultAt === undefined)) return;
    if (this.#faultAt !== undefined) this.#keepExcerpt(chunk);
    else this.#keepTail(chunk);
  }

  /**
   * The last EXCERPT_HISTORY bytes so far, however small the chunks they came in: enough to start the
   * excerpt where a whole body would, for any order up to that length found at fault at its end.
   */
  #keepTail(chunk: Uint8Array): void {
    // A copy: a view would keep the whole chunk alive until the next one.
    if (chunk.length >= EXCERPT_HISTORY) this.#lastTail = chunk.slice(chunk.length - EXCERPT_HISTORY);
    else {
      const joined = Buffer.concat([this.#lastTail, chunk]);
      this.#lastTail = joined.subarray(Math.max(0, joined.length - EXCERPT_HISTORY));
    }
  }

  /**
   * The first fault's bytes: from the tail of the bytes before (when the order began there) on, over as many
   * chunks as it takes to reach EXCERPT_SPAN or the end.
   */
  #keepExcerpt(chunk: Uint8Array): void {
    const chunkStart = this.#bytes - chunk.length;
    if (this.#excerptBytes === undefined) {
      const tailStart = chunkStart - this.#lastTail.length;
      this.#excerptFrom = Math.max(tailStart, (this.#faultAt as number) - EXCERPT_BEFORE);
      this.#excerptBytes = Buffer.from(this.#lastTail.subarray(Math.max(0, this.#excerptFrom - tailStart)));
    }
    const bytes = Buffer.concat([
      this.#excerptBytes,
      chunk.subarray(Math.max(0, this.#excerptFrom - chunkStart)),
    ]);
    this.#excerptBytes = bytes.subarray(0, EXCERPT_SPAN);
    if (bytes.length >= EXCERPT_SPAN) this.#finishExcerpt();
  }

  #finishExcerpt(): void {
    if (this.#excerptBytes === undefined || this.#excerpt !== undefined) return;
    this.#excerpt = { from: this.#excerptFrom, text: this.#excerptBytes.toString("utf8") };
    this.#excerptBytes = undefined;
  }

  /** Notes where the first order at fault began. */
  #fault(): void {
    this.#faultAt ??= this.#stream.elementStart;
  }

  /**
   * The verdict on the orders judged so far, for a list whose rest will not be judged: its problems stand,
   * `count` is the orders judged, and `partial` says why and how far (`bytes` is what the judge was given).
   */
  endPartial(reason: string): ListVerdict {
    this.#stream.release();
    this.#giveKept();
    return this.#verdict(this.#seen, {
      allRecords: false,
      partial: `${reason}: the first ${this.#seen} orders (${this.#bytes} bytes) were judged`,
      ...this.#rootNotArray(),
    });
  }

  /**
   * A body whose root began as something other than an array is no list, however it goes on: said of a
   * text cut short too (its value stands in by its kind), so that what came proves it.
   */
  #rootNotArray(): Pick<ListVerdict, "notArray"> {
    return this.#stream.streamedArray ? {} : rootNotArray(this.#stream.rootFirstByte);
  }

  /** Judges no more: what the reader took from its account goes back. */
  drop(): void {
    this.#stream.release();
    this.#giveKept();
  }

  /**
   * Takes from the account what a record or a repeated id kept until the verdict costs; false, taking
   * nothing, when it has no room. The verdict's holder accounts for them from there (given back at the end).
   */
  #tryKeep(id: string, text = ""): boolean {
    if (this.#memory === undefined) return true;
    const bytes = keptBytes(id, text);
    if (!this.#memory.tryTake(bytes)) return false;
    this.#keptCharged += bytes;
    return true;
  }

  #giveKept(): void {
    this.#memory?.give(this.#keptCharged);
    this.#keptCharged = 0;
  }

  /** Something kept found no room: the judging stops at this order, the list judged in part. */
  #keptOverBudget(what: string): JsonStreamError {
    return new JsonStreamError(
      `${what} needing more memory than the budget has left`,
      this.#stream.elementStart,
      {
        what: "memory",
        bound: this.#keptCharged,
      },
    );
  }

  end(): ListVerdict {
    if (this.#overBudget !== undefined) return this.endPartial(this.#overBudget);
    let root: unknown;
    const unfinished = this.#syntax === undefined ? this.#utf8.end() : -1;
    if (unfinished !== -1) this.#syntax = notUtf8(unfinished, undefined, true);
    if (this.#syntax === undefined) {
      try {
        root = this.#stream.end();
      } catch (error) {
        this.#stop(error);
      }
      // What the last order needed found no room: judged in part, as when a write found none.
      if (this.#overBudget !== undefined) return this.endPartial(this.#overBudget);
    }
    this.#stream.release();
    this.#giveKept();
    const streamedArray = this.#syntax === undefined && this.#stream.streamedArray;
    return this.#verdict(streamedArray ? (root as number) : 0, {
      ...(this.#syntax === undefined
        ? streamedArray
          ? {}
          : { notArray: { value: root } }
        : this.#rootNotArray()),
      ...(this.#indexFull ? { indexLimit: this.#maxIndexed } : {}),
    });
  }

  #stop(error: unknown): void {
    if (!(error instanceof JsonStreamError)) throw error;
    if (error.limit?.what === "memory") {
      this.#overBudget = `over the memory budget (${error.message})`;
      this.#stream.release();
      return;
    }
    this.#syntax = error.message;
    if (error.limit) this.#limit = { ...error.limit, offset: error.offset };
  }

  #verdict(count: number, rest: Partial<ListVerdict>): ListVerdict {
    this.#finishExcerpt();
    this.#indexWatchedFound();
    return {
      bytes: this.#bytes,
      ...(this.#limit ? { limit: this.#limit } : this.#syntax !== undefined ? { syntax: this.#syntax } : {}),
      ...(this.#excerpt ? { excerpt: this.#excerpt } : {}),
      count,
      invalid: this.#invalid,
      duplicates: this.#duplicates,
      exposingStatus: this.#exposing,
      unindexed: this.#unindexed,
      orders: this.#orders,
      repeats: this.#repeats,
      records: this.#records,
      allRecords: this.#allRecords,
      ...rest,
    };
  }

  #judgeOrder(order: unknown, index: number): void {
    if (this.#watchedOnly && this.#passedOver(order)) return;
    this.#seen++;
    const exact = this.#stream.exactNumbers;
    // Most orders hold no LosslessNumber; those are validated as they are, without a projected copy.
    const valid = exact === this.#exactBefore ? this.#validate(order) : validateExact(this.#validate, order);
    this.#exactBefore = exact;
    const record = isRecord(order) ? order : undefined;
    const id = record?.id;
    if (!valid) {
      this.#fault();
      this.#invalid.count++;
      if (this.#invalid.first.length < this.#keep) {
        const problems = (this.#validate.errors ?? []).map((error) =>
          `${error.instancePath.slice(1) || "the order"} ${error.message}`.trim(),
        );
        this.#invalid.first.push(`${describeOrder(index, id, record)}: ${[...new Set(problems)].join("; ")}`);
      }
    }
    if (record && "status" in record) {
      this.#fault();
      this.#exposing.count++;
      if (this.#exposing.first.length < this.#keep) this.#exposing.first.push(describeId(id));
    }
    let hi: number;
    let lo: number;
    if (typeof id === "number" && id >= 0 && Number.isSafeInteger(id)) {
      hi = Math.floor(id / 4294967296) | 0;
      lo = id | 0;
    } else {
      const halves = idHalves(id);
      if (halves === undefined) {
        this.#unindexed++;
        return;
      }
      ({ hi, lo } = halves);
    }
    const [digestA, digestB] = digestOf(order);
    if (!this.#indexed(hi, lo, digestA, digestB)) return;
    if (this.#allRecords && this.#keptAmongAll(order, hi, lo)) return;
    if (this.#watchLows.has(lo)) {
      const key = bigintOf(hi, lo).toString();
      if (this.#watch.has(key)) this.#keepWatched(key, recordText(order));
    }
  }

  /**
   * An order's record kept among all of the list's while they stay within their bounds (false past them):
   * from there only the watched records stay.
   */
  #keptAmongAll(order: unknown, hi: number, lo: number): boolean {
    // An order reckoned larger than the room left is not written out to find that it does not fit.
    const fits = this.#recordChars + this.#stream.elementBytes <= this.#keepRecordChars;
    if (this.#orders.size <= this.#keepRecordsUpTo && fits) {
      const text = recordText(order);
      const key = bigintOf(hi, lo).toString();
      this.#recordChars += text.length;
      // Past the account's room too, the list is kept as ids and digests, as a long one is.
      if (this.#recordChars <= this.#keepRecordChars && this.#tryKeep(key, text)) {
        this.#records.set(key, text);
        return true;
      }
    }
    this.#allRecords = false;
    for (const [id, text] of this.#records) {
      if (this.#watch.has(id)) continue;
      this.#records.delete(id);
      if (this.#memory === undefined) continue;
      this.#memory.give(keptBytes(id, text));
      this.#keptCharged -= keptBytes(id, text);
    }
    return false;
  }

  /**
   * A valid flat order, judged from its bytes as `#judgeOrder` would judge it as an object (a property test
   * holds the two to the same verdicts). Anything that needs more than a valid record's id and digest (a
   * doubt of the plan, a status field, a kept record, an id that is no plain integer) is declined and read
   * the ordinary way.
   */
  #judgeFlatOrder(fields: FlatFields): boolean {
    if (this.#watchedOnly) return this.#flatPassedOver(fields);
    if (this.#allRecords || !(this.#plan as FlatRecordPlan).valid(fields)) return false;
    const { keyHashesA, keyHashesB, id, status } = this.#shape.of(fields);
    if (status) return false;
    flatDigest(fields, keyHashesA, keyHashesB, this.#digest);
    const [a, b] = this.#digest as unknown as [number, number];
    if (id === -1 || fields.kinds[id] !== KIND_NUMBER) return false;
    const value = fields.numbers[id] as number;
    let hi: number;
    let lo: number;
    if (value >= 0) {
      hi = Math.floor(value / 4294967296) | 0;
      lo = value | 0;
    } else ({ hi, lo } = halvesOfNumber(value));
    if (this.#watchLows.has(lo)) return false;
    this.#indexed(hi, lo, a, b);
    this.#seen++;
    return true;
  }

  /**
   * Watched-only: an order that is not watched, passed over once its id is known to be an int64 or counted
   * as unindexed; false for a watched one, which is judged in full.
   */
  #passedOver(order: unknown): boolean {
    const halves = idHalves(isRecord(order) ? order.id : undefined);
    if (halves !== undefined && this.#watchLows.has(halves.lo)) {
      if (this.#watch.has(bigintOf(halves.hi, halves.lo).toString())) return false;
    }
    this.#seen++;
    if (halves === undefined) this.#unindexed++;
    return true;
  }

  /**
   * `#passedOver` from a flat order's bytes, with no object made: false (read it the ordinary way) for an
   * order that may be watched.
   */
  #flatPassedOver(fields: FlatFields): boolean {
    const id = fields.indexOf("id");
    const kind = id === -1 ? -1 : fields.kinds[id];
    if (kind === KIND_NUMBER) {
      const value = fields.numbers[id] as number;
      const lo = value >= 0 ? value | 0 : halvesOfNumber(value).lo;
      if (this.#watchLows.has(lo) && this.#watch.has(String(value)))
        return this.#flatWatched(fields, halvesOfNumber(value));
    } else if (kind === KIND_LONG_INTEGER) {
      const lo = longIntegerLow(fields, id);
      if (lo === undefined || this.#watchLows.has(lo)) {
        const digits = fields.text(id);
        if (this.#watch.has(digits)) return this.#flatWatched(fields, halvesOfText(digits));
        if (!longIntegerWithinInt64(fields, id)) this.#unindexed++;
      }
    } else this.#unindexed++;
    this.#seen++;
    return true;
  }

  /**
   * Watched-only: a watched flat order judged from its bytes, as `#judgeOrder` would judge it, when the
   * plan promises it valid and it has no status field; false for anything else, read as an object and
   * judged in full for the messages.
   */
  #flatWatched(fields: FlatFields, halves: IdHalves | undefined): boolean {
    const kept = halves === undefined ? undefined : flatWatchedRecord(fields, this.#plan);
    if (halves === undefined || kept === undefined) return false;
    this.#seen++;
    const { hi, lo } = halves;
    if (this.#indexed(hi, lo, kept.digestA, kept.digestB))
      this.#keepWatched(bigintOf(hi, lo).toString(), kept.record);
    return true;
  }

  /**
   * A watched order's record, which the rules and messages need: charged to the account whatever room it
   * has left, as the run names only a few orders to watch (each bounded by the reader's limits).
   */
  #keepWatched(id: string, text: string): void {
    const before = this.#records.get(id);
    if (!this.#tryKeep(id, text) && this.#memory?.take !== undefined) {
      const bytes = keptBytes(id, text);
      this.#memory.take(bytes);
      this.#keptCharged += bytes;
    }
    this.#records.set(id, text);
    if (before === undefined || this.#memory === undefined) return;
    this.#memory.give(keptBytes(id, before));
    this.#keptCharged -= keptBytes(id, before);
  }

  /** Watched-only: a watched order kept aside; false when its id was found before. */
  #watchedAdded(hi: number, lo: number, digestA: number, digestB: number): boolean {
    const found = this.#watchedFound;
    for (let at = 0; at < found.length; at += 4) if (found[at] === hi && found[at + 1] === lo) return false;
    found.push(hi, lo, digestA, digestB);
    return true;
  }

  /**
   * Watched-only: the watched orders found, indexed in ascending order of id, so that a handful of ids
   * listed in any order makes the index no hash table.
   */
  #indexWatchedFound(): void {
    const found = this.#watchedFound;
    const quads = Array.from({ length: found.length / 4 }, (_, at) => found.slice(at * 4, at * 4 + 4));
    quads.sort((a, b) => {
      const [x, y] = [bigintOf(a[0] as number, a[1] as number), bigintOf(b[0] as number, b[1] as number)];
      return x < y ? -1 : x > y ? 1 : 0;
    });
    for (const [hi, lo, digestA, digestB] of quads)
      this.#orders.add(hi as number, lo as number, digestA as number, digestB as number);
    found.length = 0;
  }

  /** Indexes a listed order; a repeated id is counted and named instead. */
  #indexed(hi: number, lo: number, digestA: number, digestB: number): boolean {
    if (this.#orders.size >= this.#maxIndexed) {
      this.#indexFull = true;
      return false;
    }
    const added = this.#watchedOnly
      ? this.#watchedAdded(hi, lo, digestA, digestB)
      : this.#orders.add(hi, lo, digestA, digestB);
    if (added) return true;
    this.#fault();
    const key = bigintOf(hi, lo).toString();
    const times = this.#repeats.get(key);
    if (times === undefined && !this.#tryKeep(key))
      throw this.#keptOverBudget("the ids listed more than once");
    this.#repeats.set(key, (times ?? 0) + 1);
    if (times === undefined) {
      this.#duplicates.count++;
      if (this.#duplicates.first.length < this.#keep) this.#duplicates.first.push(key);
    }
    return false;
  }
}

/** What a record or a repeated id (`text` empty) kept until the verdict is reckoned to cost. */
function keptBytes(id: string, text: string): number {
  return KEPT_ENTRY_BYTES + 2 * (id.length + text.length);
}

/** What a flat order's shape (its keys, in order) works out to for the judge. */
function flatShapeOf(fields: FlatFields) {
  const keys = fields.keys.slice(0, fields.count);
  return {
    keyHashesA: Int32Array.from(keys, (key) => keyHashOf(key)[0]),
    keyHashesB: Int32Array.from(keys, (key) => keyHashOf(key)[1]),
    id: keys.indexOf("id"),
    status: keys.includes("status"),
  };
}

const watchedShape = new FieldShape(flatShapeOf);
const watchedDigest = new Int32Array(2);

/**
 * A watched flat order as the judge keeps it (its record's text and digest) when the plan promises it
 * valid and it has no status field; undefined when the judge reads it as an object instead.
 */
export function flatWatchedRecord(
  fields: FlatFields,
  plan: FlatRecordPlan | undefined,
): { record: string; digestA: number; digestB: number } | undefined {
  if (plan === undefined || !plan.valid(fields)) return undefined;
  const { keyHashesA, keyHashesB, status } = watchedShape.of(fields);
  if (status) return undefined;
  flatDigest(fields, keyHashesA, keyHashesB, watchedDigest);
  return {
    record: flatRecordText(fields),
    digestA: watchedDigest[0] as number,
    digestB: watchedDigest[1] as number,
  };
}

/** The bounds of the judge's reader that a command may set (--max-depth, --max-string, --max-number). */
export type ReaderLimits = Pick<ListJudgeOptions, "maxDepth" | "maxStringBytes" | "maxNumberChars">;

/** A whole body judged at once, through the same judge as a stream. */
export function judgeListBody(body: Uint8Array, options: ListJudgeOptions): ListVerdict {
  const judge = new ListJudge(options);
  judge.write(body);
  return judge.end();
}

/**
 * Why a list could not be judged when its judge threw (a fault met on that answer only): the message that
 * fails that one answer, in the suite and the proxy alike, instead of ending the run.
 */
export function judgeFault(error: unknown): string {
  return `the list could not be judged: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * A flat order's digest into `out`, the same as digestOf gives the order read as an object: a long
 * integer hashes as its LosslessNumber does.
 */
function flatDigest(
  fields: FlatFields,
  keyHashesA: Int32Array,
  keyHashesB: Int32Array,
  out: Int32Array,
): void {
  let a = 0;
  let b = 0;
  for (let field = 0; field < fields.count; field++) {
    const kind = fields.kinds[field];
    let valueA: number;
    let valueB: number;
    if (kind === KIND_NUMBER) {
      const value = fields.numbers[field] as number;
      valueA = numberLaneA(value);
      valueB = numberLaneB(value);
    } else if (kind === KIND_STRING) {
      // The string's bytes are ASCII: each is the character code hashText reads.
      const bytes = fields.bytes;
      const start = fields.starts[field] as number;
      const end = fields.ends[field] as number;
      valueA = STRING_SEED_A;
      valueB = STRING_SEED_B;
      for (let i = start; i < end; i++) {
        const code = bytes[i] as number;
        valueA = Math.imul(valueA ^ code, 0x01000193);
        valueB = Math.imul(valueB ^ code, 0x5bd1e995) ^ (valueB >>> 15);
      }
      valueA ^= end - start;
    } else if (kind === KIND_LONG_INTEGER) {
      [valueA, valueB] = hashText(`\u0001${fields.text(field)}`, 0x9747b28c, 0x6a09e667);
    } else {
      const literal = kind === KIND_TRUE ? TRUE_HASH : kind === KIND_FALSE ? FALSE_HASH : NULL_HASH;
      [valueA, valueB] = literal;
    }
    a = (a + mix(keyHashesA[field] as number, valueA)) | 0;
    b = (b + mix(keyHashesB[field] as number, valueB)) | 0;
  }
  out[0] = a;
  out[1] = b;
}

/** A flat order's text as recordText writes it: fields in sorted order, each value's JSON as it came. */
function flatRecordText(fields: FlatFields): string {
  const order = Array.from({ length: fields.count }, (_, field) => field).sort((x, y) =>
    (fields.keys[x] as string) < (fields.keys[y] as string) ? -1 : 1,
  );
  const { bytes } = fields;
  // Joined once, and each value read as one string: a text grown piece by piece is a tree of its pieces,
  // several times its length in memory for as long as the record is kept.
  const parts = order.map((field) => {
    const start = fields.jsonStart(field);
    const value = Buffer.from(bytes.buffer, bytes.byteOffset + start, fields.jsonEnd(field) - start);
    return `${JSON.stringify(fields.keys[field])}:${value.toString("latin1")}`;
  });
  return `{${parts.join(",")}}`;
}

/**
 * The low 32 bits of a positive KIND_LONG_INTEGER within int64, from its digits with no string made;
 * undefined for a negative one or one past int64, left to its text.
 */
function longIntegerLow(fields: FlatFields, field: number): number | undefined {
  const bytes = fields.bytes;
  const start = fields.starts[field] as number;
  const end = fields.ends[field] as number;
  if (bytes[start] === 0x2d) return undefined;
  // The digits as high × 10^9 + low: high below 2^34, low below 2^30, each exact.
  let high = 0;
  let low = 0;
  for (let at = start; at < end - 9; at++) high = high * 10 + ((bytes[at] as number) - 0x30);
  for (let at = end - 9; at < end; at++) low = low * 10 + ((bytes[at] as number) - 0x30);
  if (high > 9223372036 || (high === 9223372036 && low > 854775807)) return undefined;
  // Of high × 10^9 only the part of high below 2^32 reaches the low 32 bits.
  return (Math.imul((high % 4294967296) | 0, 1_000_000_000) + low) | 0;
}

function describeOrder(index: number, id: unknown, record: Record<string, unknown> | undefined): string {
  if (!record) return `orders[${index}]`;
  return `orders[${index}] (${id === undefined ? "no id" : `id ${describeId(id)}`})`;
}

function describeId(id: unknown): string {
  if (isJsonNumber(id)) return numberText(id);
  const text = id === undefined ? "none" : stringifyExact(id);
  return text.length > DESCRIBED_CHARS ? `${text.slice(0, DESCRIBED_CHARS - 1)}…` : text;
}

/**
 * An order's JSON with its fields in sorted order, numbers digit for digit: field order is not meaning, and
 * a server may write the same record's fields in another order next time.
 */
export function recordText(order: unknown): string {
  if (!isRecord(order)) return stringifyExact(order);
  // Joined once: a text grown piece by piece is a tree of its pieces, several times its length in memory.
  const parts = Object.keys(order)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${valueText(order[key])}`);
  return `{${parts.join(",")}}`;
}

function valueText(value: unknown): string {
  if (isJsonNumber(value)) return numberText(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null || typeof value === "boolean") return String(value);
  return stringifyExact(value);
}

// Two independent 32-bit lanes make a 64-bit digest; a field's hash is added in, so field order is no part of it.
const keyHashes = new Map<string, [number, number]>();

/** A 64-bit digest of an order's record with its fields in any order, numbers by their exact digits. */
function digestOf(order: unknown): [number, number] {
  if (!isRecord(order)) return hashText(`\u0000${stringifyExact(order)}`, 0x811c9dc5, 0x01000193);
  let a = 0;
  let b = 0;
  for (const key in order) {
    if (!Object.hasOwn(order, key)) continue;
    const keyHash = keyHashOf(key);
    const [valueA, valueB] = hashValue(order[key]);
    a = (a + mix(keyHash[0], valueA)) | 0;
    b = (b + mix(keyHash[1], valueB)) | 0;
  }
  return [a, b];
}

function keyHashOf(key: string): [number, number] {
  let keyHash = keyHashes.get(key);
  if (keyHash === undefined) {
    keyHash = hashText(key, 0x811c9dc5, 0x01000193);
    if (keyHashes.size < 1024) keyHashes.set(key, keyHash);
  }
  return keyHash;
}

// What a value hashes to, shared by records read as objects and flat records read from their bytes.
const STRING_SEED_A = 0x2f6b7a31;
const STRING_SEED_B = 0x3c6ef372;
const TRUE_HASH: readonly [number, number] = [0x7a2f, 0x1d3b];
const FALSE_HASH: readonly [number, number] = [0x3c19, 0x5e77];
const NULL_HASH: readonly [number, number] = [0x4a5b, 0x6c7d];

// Plain integers of up to 15 digits; -0 is written as 0, as the record's text has it. Two lanes as two
// functions, so that the flat reading makes no array per field.
function numberLaneA(value: number): number {
  return mix(0x1b873593, Math.floor(value / 4294967296) | 0) ^ (value | 0);
}

function numberLaneB(value: number): number {
  return mix(0x5bd1e995, value | 0) ^ (Math.floor(value / 4294967296) | 0);
}

function hashValue(value: unknown): readonly [number, number] {
  if (typeof value === "number") return [numberLaneA(value), numberLaneB(value)];
  if (typeof value === "string") return hashText(value, STRING_SEED_A, STRING_SEED_B);
  if (value === true) return TRUE_HASH;
  if (value === false) return FALSE_HASH;
  if (value === null) return NULL_HASH;
  return hashText(`\u0001${stringifyExact(value)}`, 0x9747b28c, 0x6a09e667);
}

function hashText(text: string, seedA: number, seedB: number): [number, number] {
  let a = seedA;
  let b = seedB;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995) ^ (b >>> 15);
  }
  return [a ^ text.length, b];
}

function mix(a: number, b: number): number {
  let hash = Math.imul(a ^ b, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}
