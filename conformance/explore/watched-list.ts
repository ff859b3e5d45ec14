import type { ValidateFunction } from "ajv";
import { notUtf8 } from "../../common/utf8.ts";
import { Utf8Stream } from "../../common/utf8-stream.ts";
import {
  FlatFields,
  type FlatRecordPlan,
  KIND_FALSE,
  KIND_LONG_INTEGER,
  KIND_NULL,
  KIND_NUMBER,
  KIND_STRING,
  KIND_TRUE,
  MAX_FLAT_FIELDS,
  MAX_LONG_INTEGER_DIGITS,
} from "../../contract/flat-record.ts";
import { bigintOf, halvesOfText } from "../../contract/int64-index.ts";
import { DEFAULT_MAX_STRING_BYTES, type ReaderLimit } from "../../contract/json-stream.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import {
  flatWatchedRecord,
  ListJudge,
  type ListVerdict,
  type ProblemTally,
  type ReaderLimits,
} from "../judging/list-judge.ts";
import { OrderIndex } from "../judging/order-index.ts";

/** How explore reads lists: the schema a watched order is judged by and the reader's bounds. */
export interface WatchedListOptions {
  validateOrder: ValidateFunction;
  orderPlan: FlatRecordPlan | undefined;
  readerLimits?: ReaderLimits | undefined;
}

type Found = NonNullable<ElementVerdict["found"]>;

/** One order of a list as the judge saw it, alone: what a list's verdict takes from it. */
interface ElementVerdict {
  /** Not JSON, or past a bound of the reader (`limit`): why, and where from the element's first byte. */
  fault?: { message: string; offset: number; limit?: ReaderLimit };
  unindexed: number;
  /** A watched order listed with an int64 id: its canonical id (and its halves), record and digest. */
  found?: { id: string; hi: number; lo: number; record: string; digestA: number; digestB: number };
  invalid: readonly string[];
  exposing: readonly string[];
}

/**
 * A list's bytes and where its orders lie (four numbers an order), and the verdicts of those of its orders
 * some reader watched, by their place: they are the same bytes every time.
 */
interface RememberedList {
  bytes: Buffer;
  places: Int32Array;
  watched: (ElementVerdict | undefined)[];
}

// Past this, a list is not remembered: it seldom comes in one chunk, and its copy would be held.
const REMEMBERED_LIST_BYTES = 256 * 1024;
// Watched orders' verdicts remembered by their bytes: a history lists its orders again and again, the
// same bytes each time.
const REMEMBERED_ORDERS = 4096;
const OPEN = Buffer.from("[");
const CLOSE = Buffer.from("]");
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
// Keys longer than this the stream reads the ordinary way; so do these.
const MAX_FLAT_KEY_BYTES = 32;
const PROTO = Buffer.from("__proto__");
// A list with at least this many declined elements, a tenth of them or more, turns the run to whole judges.
const DECLINED_AT_LEAST = 16;
const DECLINED_SHARE = 10;
// Bound once here: read in every order's loop.
const FLAT_FIELDS = MAX_FLAT_FIELDS;
const LONG_DIGITS = MAX_LONG_INTEGER_DIGITS;

/**
 * Explore's reading of lists: the same verdict on the list as a whole and on each watched order as a
 * ListJudge judging watched orders only (`watchedOnly`) gives, for less. An order that is not watched is
 * read from its bytes for its id alone (its syntax checked, no field kept); a watched flat one is kept as
 * the judge keeps it, its verdict remembered by its bytes; anything the plain reading cannot promise the
 * judge's verdict on is judged by a ListJudge of its own. No excerpt is kept.
 */
export class WatchedLists {
  readonly #remembered = new Map<string, ElementVerdict>();
  readonly #fields = new FlatFields();
  /**
   * A list of this run whose orders the plain reading mostly declined (nested fields, escapes, non-ASCII):
   * a judge per order costs more than one judge of the whole list, so later lists get the whole judge.
   */
  #wholeJudgeCheaper = false;

  /**
   * The scan of a watch set: a history's lists share theirs. A scan keeps nothing between its reads, so
   * lists read at once share it too.
   */
  readonly #scans = new WeakMap<ReadonlySet<string>, FlatScan>();

  /**
   * The last list that came whole in one chunk and read as flat orders only, with where each of its orders
   * and their ids lie: the lists of a run are mostly the same bytes as the one before (a cancel does not
   * change a listed record), and such a list is then read by its places alone, its ids looked up in the
   * reader's watch set.
   */
  #lastList: RememberedList | undefined;

  constructor(private readonly options: WatchedListOptions) {}

  /** The list of exactly these bytes, when it is the last one remembered. */
  rememberedAs(chunk: Buffer): RememberedList | undefined {
    const last = this.#lastList;
    return last !== undefined && last.bytes.length === chunk.length && last.bytes.equals(chunk)
      ? last
      : undefined;
  }

  /** A list read whole from one chunk, flat orders only: its places (start, end, id start, id end each). */
  rememberList(chunk: Buffer, places: readonly number[]): void {
    if (chunk.length > REMEMBERED_LIST_BYTES) return;
    this.#lastList = {
      bytes: Buffer.from(chunk),
      places: Int32Array.from(places),
      watched: new Array(places.length / 4),
    };
  }

  #scanFor(watch: ReadonlySet<string>): FlatScan {
    let scan = this.#scans.get(watch);
    if (scan === undefined) {
      scan = new FlatScan(watch, this.maxStringBytes);
      this.#scans.set(watch, scan);
    }
    return scan;
  }

  get maxStringBytes(): number {
    return this.options.readerLimits?.maxStringBytes ?? DEFAULT_MAX_STRING_BYTES;
  }

  reading(watch: ReadonlySet<string>): ListReading {
    if (!this.#wholeJudgeCheaper) return new WatchedListReading(this, watch, this.#scanFor(watch));
    const judge = this.judge(watch);
    return { write: (chunk) => judge.write(chunk), end: () => judge.end(), abandon: () => judge.drop() };
  }

  /** Whether lists are now read by a judge of the whole list. */
  get judgesWhole(): boolean {
    return this.#wholeJudgeCheaper;
  }

  /** A list read: `declined` of its `count` elements were each judged alone. */
  readOne(count: number, declined: number): void {
    if (declined >= DECLINED_AT_LEAST && declined * DECLINED_SHARE >= count) this.#wholeJudgeCheaper = true;
  }

  /** A ListJudge of the whole list: for a body that is no array, judged as the full judge does. */
  judge(watch: ReadonlySet<string>): ListJudge {
    return new ListJudge({
      validateOrder: this.options.validateOrder,
      orderPlan: this.options.orderPlan,
      watch,
      watchedOnly: true,
      ...this.options.readerLimits,
    });
  }

  /** One element judged alone, as the element of a list of its own. */
  element(bytes: Uint8Array, watch: ReadonlySet<string>): ElementVerdict {
    const judge = this.judge(watch);
    // One chunk, as the element came in the list: a bound on a token is checked within a chunk.
    judge.write(Buffer.concat([OPEN, bytes, CLOSE]));
    return elementVerdict(judge.end());
  }

  /**
   * A flat order with a watched int64 id (its digits at `id.start`..`id.end`), `start`..`end` in `bytes`:
   * judged as the judge judges it, and remembered by its bytes, on which alone its verdict then depends.
   */
  watchedOrder(
    bytes: Buffer,
    start: number,
    end: number,
    id: { start: number; end: number },
    watch: ReadonlySet<string>,
  ): ElementVerdict {
    const key = bytes.toString("latin1", start, end);
    const known = this.#remembered.get(key);
    if (known !== undefined) return known;
    fillFlatFields(bytes, start, this.#fields);
    const kept = flatWatchedRecord(this.#fields, this.options.orderPlan);
    const digits = bytes.toString("latin1", id.start, id.end);
    const verdict: ElementVerdict =
      kept === undefined
        ? this.element(bytes.subarray(start, end), watch)
        : { unindexed: 0, found: { id: digits, ...halvesOf(digits), ...kept }, invalid: [], exposing: [] };
    if (this.#remembered.size >= REMEMBERED_ORDERS)
      this.#remembered.delete(this.#remembered.keys().next().value as string);
    this.#remembered.set(key, verdict);
    return verdict;
  }
}

function halvesOf(digits: string): { hi: number; lo: number } {
  return halvesOfText(digits) ?? { hi: 0, lo: 0 };
}

/**
 * The fields of a flat order the scan read whole, as the judge's stream gives them to the judge (its
 * checks were the scan's).
 */
function fillFlatFields(bytes: Buffer, open: number, fields: FlatFields): void {
  let at = skipWhitespace(bytes, open + 1);
  let count = 0;
  while (bytes[at] !== CLOSE_BRACE) {
    let keyEnd = at + 1;
    while (bytes[keyEnd] !== QUOTE) keyEnd++;
    fields.keys[count] = bytes.toString("latin1", at + 1, keyEnd);
    at = skipWhitespace(bytes, skipWhitespace(bytes, keyEnd + 1) + 1);
    at = fillValue(bytes, at, fields, count++);
    at = skipWhitespace(bytes, at);
    if (bytes[at] === COMMA) at = skipWhitespace(bytes, at + 1);
  }
  fields.count = count;
  fields.bytes = bytes;
  fields.open = open;
}

/** One value of a flat order into its field: where it ends. */
function fillValue(bytes: Buffer, from: number, fields: FlatFields, field: number): number {
  const first = bytes[from] as number;
  let at = from;
  if (first === QUOTE) {
    at++;
    while (bytes[at] !== QUOTE) at++;
    fields.kinds[field] = KIND_STRING;
    fields.starts[field] = from + 1;
    fields.ends[field] = at;
    return at + 1;
  }
  fields.starts[field] = from;
  if (first === MINUS || (first >= ZERO && first <= 0x39)) {
    if (first === MINUS) at++;
    const digitsStart = at;
    let value = 0;
    for (; (bytes[at] as number) >= ZERO && (bytes[at] as number) <= 0x39; at++)
      value = value * 10 + ((bytes[at] as number) - ZERO);
    const long = at - digitsStart > 15;
    fields.kinds[field] = long ? KIND_LONG_INTEGER : KIND_NUMBER;
    fields.numbers[field] = long ? Number.NaN : first === MINUS ? -value : value;
  } else {
    fields.kinds[field] = first === 0x74 ? KIND_TRUE : first === 0x66 ? KIND_FALSE : KIND_NULL;
    at += first === 0x66 ? 5 : 4;
  }
  fields.ends[field] = at;
  return at;
}

/**
 * What a list's verdict says of the element it was given after its "[": its offsets counted from the
 * element's first byte.
 */
function elementVerdict(verdict: ListVerdict): ElementVerdict {
  const [found] = verdict.records;
  const digest = found === undefined ? undefined : verdict.orders.recordDigest(found[0]);
  const [digestA, digestB] = (digest ?? "0:0").split(":").map(Number) as [number, number];
  return {
    ...(verdict.limit !== undefined || verdict.syntax !== undefined ? { fault: faultOf(verdict) } : {}),
    unindexed: verdict.unindexed,
    ...(found !== undefined
      ? { found: { id: found[0], ...halvesOfText(found[0]), record: found[1], digestA, digestB } as Found }
      : {}),
    invalid: verdict.invalid.first,
    exposing: verdict.exposingStatus.first,
  };
}

function faultOf(verdict: ListVerdict): NonNullable<ElementVerdict["fault"]> {
  const limit = verdict.limit;
  if (limit !== undefined)
    return {
      message: `past the reader's ${limit.what} bound of ${limit.bound}`,
      offset: limit.offset - 1,
      limit: { what: limit.what, bound: limit.bound },
    };
  const message = verdict.syntax ?? "";
  const offset = AT_BYTE.exec(message)?.[1];
  return offset === undefined
    ? { message, offset: 0 }
    : { message: message.replace(AT_BYTE, ""), offset: Number(offset) - 1 };
}

const AT_BYTE = / at byte (\d+)$/;

// Where the reading is in the list's text.
const BEFORE_ROOT = 0;
const FIRST_ELEMENT = 1;
const ELEMENT = 2;
const AFTER_ELEMENT = 3;
const DONE = 4;
// What reading an order from its bytes gives instead of its end.
const DECLINED = -1;
const UNFINISHED = -2;

/** One list, read as its chunks arrive. */
class WatchedListReading implements ListReading {
  #state = BEFORE_ROOT;
  /** Bytes of the chunks before the current one. */
  #base = 0;
  #count = 0;
  /** Elements the plain reading declined, each judged by a judge of its own. */
  #declined = 0;
  #unindexed = 0;
  #syntax: string | undefined;
  #limit: (ReaderLimit & { offset: number }) | undefined;
  readonly #records = new Map<string, string>();
  readonly #found: number[] = [];
  readonly #invalid: ProblemTally = { count: 0, first: [] };
  readonly #exposing: ProblemTally = { count: 0, first: [] };
  readonly #duplicates: ProblemTally = { count: 0, first: [] };
  readonly #repeats = new Map<string, number>();
  readonly #utf8 = new Utf8Stream();
  /** An element cut by a chunk's end: its bytes so far, where it began, and how far its extent is known. */
  #carried: Buffer[] = [];
  #carriedFrom = 0;
  readonly #extent = new ValueExtent();
  /** Whitespace before the root, kept until the root shows whether it is an array. */
  readonly #beforeRoot: Uint8Array[] = [];
  /** The full judge, for a body whose root is no array. */
  #whole: ListJudge | undefined;
  readonly #scan: FlatScan;
  /** While the first chunk is read from scratch: its flat orders' places, to be remembered if it is whole. */
  #places: number[] | undefined;

  constructor(
    private readonly lists: WatchedLists,
    private readonly watch: ReadonlySet<string>,
    scan: FlatScan,
  ) {
    this.#scan = scan;
  }

  write(input: Uint8Array): void {
    if (this.#whole !== undefined) {
      this.#whole.write(input);
      return;
    }
    const base = this.#base;
    this.#base += input.length;
    if (this.#syntax !== undefined) return;
    const notText = this.#utf8.write(input);
    if (notText !== -1) {
      this.#syntax = notUtf8(notText, input[notText - base]);
      return;
    }
    const chunk = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.length);
    if (base === 0 && chunk.length > 0) {
      const remembered = this.lists.rememberedAs(chunk);
      if (remembered !== undefined) this.#replay(chunk, remembered);
      else this.#readFirst(chunk);
      return;
    }
    this.#readOn(chunk, base);
  }

  /** A first chunk read from scratch, remembered when it held the whole list and only flat orders. */
  #readFirst(chunk: Buffer): void {
    const places: number[] = [];
    this.#places = places;
    this.#readOn(chunk, 0);
    this.#places = undefined;
    const whole = this.#state === DONE && this.#syntax === undefined && this.#whole === undefined;
    if (whole && this.#declined === 0 && this.#carried.length === 0) this.lists.rememberList(chunk, places);
  }

  /**
   * A first chunk of the same bytes as a list read whole before: its orders counted and judged from their
   * places, as reading it again would (what reading depends on is its bytes alone, but for the watch set).
   */
  #replay(chunk: Buffer, remembered: RememberedList): void {
    const { places, watched } = remembered;
    const scan = this.#scan;
    for (let at = 0; at < places.length; at += 4) {
      const start = places[at] as number;
      scan.classifyId(chunk, places[at + 2] as number, places[at + 3] as number);
      if (!scan.watched) this.#flatOrder(chunk, start, places[at + 1] as number, start);
      else {
        const order = at / 4;
        const verdict =
          watched[order] ??
          this.lists.watchedOrder(chunk, start, places[at + 1] as number, scan.id, this.watch);
        watched[order] = verdict;
        this.#take(verdict, start);
      }
    }
    this.#state = DONE;
  }

  /** The chunk from where the reading is, `base` its offset in the body. */
  #readOn(chunk: Buffer, base: number): void {
    let at = this.#carried.length > 0 ? this.#carryOn(chunk) : 0;
    if (this.#state === BEFORE_ROOT) {
      at = skipWhitespace(chunk, at);
      if (at === chunk.length) {
        this.#beforeRoot.push(chunk);
        return;
      }
      if (chunk[at] !== OPEN_BRACKET) {
        this.#judgeWhole(chunk);
        return;
      }
      this.#state = FIRST_ELEMENT;
      at++;
    }
    this.#read(chunk, at, base);
  }

  /** A root that is no array: the full judge is given the body from its start, and the rest as it comes. */
  #judgeWhole(chunk: Buffer): void {
    const whole = this.lists.judge(this.watch);
    for (const before of this.#beforeRoot) whole.write(before);
    whole.write(chunk);
    this.#whole = whole;
  }

  /** The list's text from `from` to the chunk's end, while it reads as a list of orders. */
  #read(chunk: Buffer, from: number, base: number): void {
    let at = from;
    while (this.#syntax === undefined) {
      at = skipWhitespace(chunk, at);
      if (at === chunk.length) return;
      const byte = chunk[at] as number;
      if (this.#state === ELEMENT || this.#state === FIRST_ELEMENT) {
        if (byte === CLOSE_BRACKET && this.#state === FIRST_ELEMENT) {
          this.#state = DONE;
          at++;
        } else if (!startsValue(byte)) this.#unexpected(byte, base + at, "a JSON value");
        else {
          at = this.#element(chunk, at, base);
          if (at === chunk.length && this.#carried.length > 0) return;
        }
      } else if (this.#state === AFTER_ELEMENT) {
        if (byte === COMMA) this.#state = ELEMENT;
        else if (byte === CLOSE_BRACKET) this.#state = DONE;
        else this.#unexpected(byte, base + at, "',' or ']'");
        at++;
      } else this.#unexpected(byte, base + at, "the end of the JSON text");
    }
  }

  #unexpected(byte: number, offset: number, expected: string): void {
    const got =
      byte >= 0x20 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16)}`;
    this.#syntax = `expected ${expected}, got ${got} at byte ${offset}`;
  }

  /** The element starting at `start`: read, or carried when the chunk ends first. Returns where it ends. */
  #element(chunk: Buffer, start: number, base: number): number {
    this.#state = AFTER_ELEMENT;
    if (chunk[start] === OPEN_BRACE) {
      const end = this.#scan.read(chunk, start, chunk.length);
      if (end >= 0) {
        this.#flatOrder(chunk, start, end, base + start);
        return end;
      }
    }
    this.#extent.begin(chunk[start] as number);
    const end = this.#extent.scan(chunk, start + 1);
    if (end !== -1) {
      this.#judged(chunk.subarray(start, end), base + start);
      return end;
    }
    this.#carried = [Buffer.from(chunk.subarray(start))];
    this.#carriedFrom = base + start;
    return chunk.length;
  }

  /** A carried element's rest, from the start of the next chunk: where it ends in it (or the chunk's end). */
  #carryOn(chunk: Buffer): number {
    const end = this.#extent.scan(chunk, 0);
    if (end === -1) {
      this.#carried.push(Buffer.from(chunk));
      return chunk.length;
    }
    const element = Buffer.concat([...this.#carried, chunk.subarray(0, end)]);
    this.#carried = [];
    const flatEnd = element[0] === OPEN_BRACE ? this.#scan.read(element, 0, element.length) : DECLINED;
    if (flatEnd === element.length) this.#flatOrder(element, 0, flatEnd, this.#carriedFrom);
    else this.#judged(element, this.#carriedFrom);
    return end;
  }

  /** A flat order read from its bytes: counted by its id, or judged when watched. */
  #flatOrder(bytes: Buffer, start: number, end: number, offset: number): void {
    const scan = this.#scan;
    this.#places?.push(start, end, scan.id.start, scan.id.end);
    if (scan.watched) {
      this.#take(this.lists.watchedOrder(bytes, start, end, scan.id, this.watch), offset);
      return;
    }
    this.#count++;
    if (!scan.indexed) this.#unindexed++;
  }

  /** An element judged alone. */
  #judged(bytes: Uint8Array, offset: number): void {
    this.#declined++;
    this.#take(this.lists.element(bytes, this.watch), offset);
  }

  /** An element's verdict taken into the list's. */
  #take(verdict: ElementVerdict, offset: number): void {
    this.#unindexed += verdict.unindexed;
    if (verdict.fault !== undefined) {
      const at = offset + verdict.fault.offset;
      this.#syntax = `${verdict.fault.message} at byte ${at}`;
      if (verdict.fault.limit) this.#limit = { ...verdict.fault.limit, offset: at };
      return;
    }
    const index = this.#count++;
    if (verdict.invalid.length > 0) tally(this.#invalid, renumbered(verdict.invalid, index));
    if (verdict.exposing.length > 0) tally(this.#exposing, verdict.exposing);
    const found = verdict.found;
    if (found === undefined) return;
    if (!this.#records.has(found.id)) {
      this.#records.set(found.id, found.record);
      this.#found.push(found.hi, found.lo, found.digestA, found.digestB);
      return;
    }
    const times = this.#repeats.get(found.id);
    this.#repeats.set(found.id, (times ?? 0) + 1);
    if (times === undefined) tally(this.#duplicates, [found.id]);
  }

  abandon(): void {
    this.#whole?.drop();
  }

  end(): ListVerdict {
    if (this.#whole !== undefined) return this.#whole.end();
    if (this.#syntax === undefined) {
      const unfinished = this.#utf8.end();
      if (unfinished !== -1) this.#syntax = notUtf8(unfinished, undefined, true);
    }
    if (this.#syntax === undefined && this.#carried.length > 0) this.#endInElement();
    if (this.#syntax === undefined && this.#state !== DONE) {
      const what = this.#state === BEFORE_ROOT ? "empty JSON text" : "unexpected end of the JSON text";
      this.#syntax = `${what} at byte ${this.#base}`;
    }
    this.lists.readOne(this.#count, this.#declined);
    return this.#verdict();
  }

  /**
   * The text ends inside an element: judged as a list that ends there, which says why (a number or a
   * word may be whole, and judged, before the end is found missing).
   */
  #endInElement(): void {
    const judge = this.lists.judge(this.watch);
    judge.write(Buffer.concat([OPEN, ...this.#carried]));
    const verdict = elementVerdict(judge.end());
    this.#carried = [];
    this.#unindexed += verdict.unindexed;
    const at = this.#carriedFrom + (verdict.fault?.offset ?? 0);
    this.#syntax = `${verdict.fault?.message ?? "unexpected end of the JSON text"} at byte ${at}`;
    if (verdict.fault?.limit) this.#limit = { ...verdict.fault.limit, offset: at };
  }

  #verdict(): ListVerdict {
    const verdict = new WatchedListVerdict(this.#found, this.#records, this.#repeats);
    verdict.bytes = this.#base;
    if (this.#limit) verdict.limit = this.#limit;
    else if (this.#syntax !== undefined) verdict.syntax = this.#syntax;
    verdict.count = this.#syntax === undefined ? this.#count : 0;
    verdict.invalid = this.#invalid;
    verdict.duplicates = this.#duplicates;
    verdict.exposingStatus = this.#exposing;
    verdict.unindexed = this.#unindexed;
    return verdict;
  }
}

/** A list's verdict as explore's reading gives it: one made per list, so its shape is a class's. */
class WatchedListVerdict implements ListVerdict {
  bytes = 0;
  declare syntax?: string;
  declare limit?: ReaderLimit & { offset: number };
  count = 0;
  invalid: ProblemTally = NO_PROBLEMS;
  duplicates: ProblemTally = NO_PROBLEMS;
  exposingStatus: ProblemTally = NO_PROBLEMS;
  unindexed = 0;
  readonly allRecords = false;
  readonly #found: readonly number[];
  #orders: OrderIndex | undefined;

  constructor(
    found: readonly number[],
    readonly records: ReadonlyMap<string, string>,
    readonly repeats: ReadonlyMap<string, number>,
  ) {
    this.#found = found;
  }

  /** Made only when asked for: explore reads `records`, which holds the same watched orders. */
  get orders(): OrderIndex {
    this.#orders ??= indexOf(this.#found);
    return this.#orders;
  }
}

const NO_PROBLEMS: ProblemTally = { count: 0, first: [] };

function tally(into: ProblemTally, problems: readonly string[]): void {
  into.count += problems.length;
  for (const problem of problems) if (into.first.length < 10) into.first.push(problem);
}

/** An order's problems as the judge named them in a list of its own, named by its place in this list. */
function renumbered(problems: readonly string[], index: number): string[] {
  return problems.map((problem) => problem.replace(/^orders\[0\]/, `orders[${index}]`));
}

/** The watched orders found, indexed in ascending order of id as the full judge indexes them. */
function indexOf(found: readonly number[]): OrderIndex {
  const quads = Array.from({ length: found.length / 4 }, (_, at) => found.slice(at * 4, at * 4 + 4));
  const key = (quad: number[]) => bigintOf(quad[0] as number, quad[1] as number);
  quads.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const index = new OrderIndex();
  for (const [hi, lo, digestA, digestB] of quads)
    index.add(hi as number, lo as number, digestA as number, digestB as number);
  return index;
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function skipWhitespace(bytes: Uint8Array, from: number): number {
  let at = from;
  while (at < bytes.length && isWhitespace(bytes[at] as number)) at++;
  return at;
}

/** Whether a byte may begin a JSON value (the reading of the value says whether it does). */
function startsValue(byte: number): boolean {
  return (
    byte === OPEN_BRACE ||
    byte === OPEN_BRACKET ||
    byte === QUOTE ||
    byte === MINUS ||
    (byte >= ZERO && byte <= 0x39) ||
    byte === 0x74 ||
    byte === 0x66 ||
    byte === 0x6e
  );
}

/**
 * Where a JSON value ends, found across chunks without reading it, as the judge's stream finds it: strings
 * skipped whole, containers by their depth, a word by its length, a number where the stream stops reading
 * it. Whether the bytes are the value they seem is for the judge to say.
 */
class ValueExtent {
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Bytes of a word still to come; 0 for any other value. */
  #wordLeft = 0;
  #number = false;
  /** A number's digits so far, and whether it is read on by its characters (a fraction, an exponent…). */
  #digits = 0;
  #leadingZero = false;
  #numberText = false;

  begin(first: number): void {
    this.#inString = first === QUOTE;
    this.#depth = first === OPEN_BRACE || first === OPEN_BRACKET ? 1 : 0;
    this.#escaped = false;
    this.#wordLeft = first === 0x74 || first === 0x6e ? 3 : first === 0x66 ? 4 : 0;
    this.#number = first === MINUS || (first >= ZERO && first <= 0x39);
    this.#digits = first === MINUS ? 0 : 1;
    this.#leadingZero = first === ZERO;
    this.#numberText = false;
  }

  /** The value's end in `bytes` from `from` on (just past its last byte), or -1 when it goes on past them. */
  scan(bytes: Uint8Array, from: number): number {
    if (this.#number) return this.#numberEnd(bytes, from);
    for (let at = from; at < bytes.length; at++) {
      const byte = bytes[at] as number;
      if (this.#wordLeft > 0) {
        // A word's letters are ASCII: a byte past it ends the word there, never inside a character.
        if (byte >= 0x80) return at;
        if (--this.#wordLeft === 0) return at + 1;
      } else if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (byte === BACKSLASH) this.#escaped = true;
        else if (byte === QUOTE) {
          this.#inString = false;
          if (this.#depth === 0) return at + 1;
        }
      } else if (byte === QUOTE) this.#inString = true;
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.#depth++;
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        if (--this.#depth === 0) return at + 1;
      }
    }
    return -1;
  }

  /**
   * A plain integer of up to 15 digits ends at the first byte that is none of its own; anything else is
   * read on over every character a number may hold, and its grammar checked by the judge.
   */
  #numberEnd(bytes: Uint8Array, from: number): number {
    for (let at = from; at < bytes.length; at++) {
      const byte = bytes[at] as number;
      if (this.#numberText) {
        if (!isNumberCharacter(byte)) return at;
      } else if (byte >= ZERO && byte <= 0x39) {
        if (this.#digits === 0) this.#leadingZero = byte === ZERO;
        this.#digits++;
      } else {
        const plain = byte !== 0x2e && byte !== 0x65 && byte !== 0x45;
        if (plain && this.#digits > 0 && this.#digits <= 15 && !(this.#digits > 1 && this.#leadingZero))
          return at;
        this.#numberText = true;
        if (!isNumberCharacter(byte)) return at;
      }
    }
    return -1;
  }
}

function isNumberCharacter(byte: number): boolean {
  return (
    (byte >= ZERO && byte <= 0x39) ||
    byte === MINUS ||
    byte === 0x2b ||
    byte === 0x2e ||
    (byte | 0x20) === 0x65
  );
}

/**
 * A flat order read from its bytes for its id alone, on the terms the stream reads a flat object by
 * (flatObject): keys and strings of printable ASCII with no escapes, integers of up to 19 digits, the
 * three words, no key twice. Anything else is declined, to be judged.
 */
class FlatScan {
  /** After a read: the id is an int64 (the full judge indexes it), and one of the watched. */
  indexed = false;
  watched = false;
  readonly #keyHashes = new Int32Array(FLAT_FIELDS);
  readonly #keyStarts = new Int32Array(FLAT_FIELDS);
  readonly #keyEnds = new Int32Array(FLAT_FIELDS);
  /** Where the id's digits are, after a read that found one. */
  readonly id = { start: -1, end: -1 };
  readonly #watchedIds: readonly Buffer[] | undefined;
  /** By tailKey: whether some watched id ends so. Most ids listed are not watched, and end otherwise. */
  readonly #mayBeWatched = new Uint8Array(TAIL_KEYS);
  readonly #maxStringBytes: number;

  constructor(
    private readonly watch: ReadonlySet<string>,
    maxStringBytes: number,
  ) {
    // A handful of ids is looked for byte by byte; many, by their text.
    this.#watchedIds = watch.size <= 16 ? [...watch].map((id) => Buffer.from(id, "latin1")) : undefined;
    for (const id of watch) {
      const digits = Buffer.from(id, "latin1");
      this.#mayBeWatched[tailKey(digits, 0, digits.length)] = 1;
    }
    this.#maxStringBytes = maxStringBytes;
  }

  /** The order's end, or DECLINED, or UNFINISHED when `length` comes first. */
  read(bytes: Buffer, open: number, length: number): number {
    this.id.start = -1;
    let at = skipWhitespace(bytes, open + 1);
    if (at === length) return UNFINISHED;
    let count = 0;
    if (bytes[at] === CLOSE_BRACE) at++;
    else {
      for (;;) {
        if (at === length) return UNFINISHED;
        if (count === FLAT_FIELDS || bytes[at] !== QUOTE) return DECLINED;
        at = this.#key(bytes, at + 1, length, count);
        if (at < 0) return at;
        at = this.#value(bytes, at, length, count++);
        if (at < 0) return at;
        at = skipWhitespace(bytes, at);
        if (at === length) return UNFINISHED;
        const after = bytes[at++];
        if (after === CLOSE_BRACE) break;
        if (after !== COMMA) return DECLINED;
        at = skipWhitespace(bytes, at);
      }
    }
    this.#classify(bytes);
    return at;
  }

  /** A key from after its opening quote, and the colon after it: where its value begins. */
  #key(bytes: Buffer, from: number, length: number, count: number): number {
    let at = from;
    let hash = 0;
    for (;;) {
      if (at === length) return UNFINISHED;
      const byte = bytes[at] as number;
      if (byte === QUOTE) break;
      if (byte === BACKSLASH || byte < 0x20 || byte >= 0x80) return DECLINED;
      hash = (Math.imul(hash, 31) + byte) | 0;
      at++;
    }
    const size = at - from;
    if (size > MAX_FLAT_KEY_BYTES || sameBytes(bytes, from, at, PROTO)) return DECLINED;
    for (let k = 0; k < count; k++) {
      const start = this.#keyStarts[k] as number;
      if (this.#keyHashes[k] === hash && (this.#keyEnds[k] as number) - start === size)
        if (bytes.compare(bytes, start, start + size, from, at) === 0) return DECLINED;
    }
    this.#keyHashes[count] = hash;
    this.#keyStarts[count] = from;
    this.#keyEnds[count] = at;
    at = skipWhitespace(bytes, at + 1);
    if (at === length) return UNFINISHED;
    if (bytes[at] !== COLON) return DECLINED;
    at = skipWhitespace(bytes, at + 1);
    return at === length ? UNFINISHED : at;
  }

  /** A value from its first byte: where it ends. An id's digits are noted. */
  #value(bytes: Buffer, from: number, length: number, field: number): number {
    const first = bytes[from] as number;
    const isId =
      (this.#keyEnds[field] as number) - (this.#keyStarts[field] as number) === 2 &&
      bytes[this.#keyStarts[field] as number] === 0x69 &&
      bytes[(this.#keyStarts[field] as number) + 1] === 0x64;
    if (first === QUOTE) {
      let at = from + 1;
      for (;;) {
        if (at === length) return UNFINISHED;
        const byte = bytes[at] as number;
        if (byte === QUOTE) break;
        if (byte === BACKSLASH || byte < 0x20 || byte >= 0x80) return DECLINED;
        at++;
      }
      if (at - from - 1 > this.#maxStringBytes) return DECLINED;
      return at + 1;
    }
    if (first === MINUS || (first >= ZERO && first <= 0x39)) {
      const end = integerEnd(bytes, from, length);
      if (end >= 0 && isId) {
        this.id.start = from;
        this.id.end = end;
      }
      return end;
    }
    const word = first === 0x74 ? "true" : first === 0x66 ? "false" : first === 0x6e ? "null" : undefined;
    if (word === undefined) return DECLINED;
    if (from + word.length > length) return UNFINISHED;
    for (let k = 1; k < word.length; k++) if (bytes[from + k] !== word.charCodeAt(k)) return DECLINED;
    return from + word.length;
  }

  /** Whether the id at `start`..`end` (none when -1) is an int64, and watched: as a read that found it there. */
  classifyId(bytes: Buffer, start: number, end: number): void {
    this.id.start = start;
    this.id.end = end;
    this.#classify(bytes);
  }

  /** Whether the id read is an int64, and watched. */
  #classify(bytes: Buffer): void {
    const { start, end } = this.id;
    this.indexed = start !== -1 && withinInt64(bytes, start, end);
    this.watched = false;
    if (!this.indexed || this.#mayBeWatched[tailKey(bytes, start, end)] === 0) return;
    const ids = this.#watchedIds;
    if (ids === undefined) {
      this.watched = this.watch.has(bytes.toString("latin1", start, end));
      return;
    }
    for (let k = 0; k < ids.length; k++) {
      if (sameBytes(bytes, start, end, ids[k] as Buffer)) {
        this.watched = true;
        return;
      }
    }
  }
}

const TAIL_KEYS = 1024;

/** A key of an id's digits from its length and last two bytes: ids near one another differ there. */
function tailKey(bytes: Uint8Array, start: number, end: number): number {
  const last = bytes[end - 1] as number;
  const before = end - 2 >= start ? (bytes[end - 2] as number) : 0;
  return ((last << 5) ^ before ^ ((end - start) << 2)) & (TAIL_KEYS - 1);
}

/**
 * Where a plain integer of up to 19 digits that begins at `from` ends; DECLINED for anything else (a
 * fraction, an exponent, a leading zero, -0, more digits), which the judge reads.
 */
function integerEnd(bytes: Uint8Array, from: number, length: number): number {
  const negative = bytes[from] === MINUS;
  const digitsStart = negative ? from + 1 : from;
  let at = digitsStart;
  while (at < length && (bytes[at] as number) >= ZERO && (bytes[at] as number) <= 0x39) at++;
  if (at === length) return UNFINISHED;
  const digits = at - digitsStart;
  if (digits === 0 || digits > LONG_DIGITS) return DECLINED;
  if (bytes[digitsStart] === ZERO && (digits > 1 || negative)) return DECLINED;
  const next = bytes[at];
  if (next === 0x2e || next === 0x65 || next === 0x45) return DECLINED;
  return at;
}

/** Whether the integer's digits (after a minus) lie within int64. */
function withinInt64(bytes: Uint8Array, start: number, end: number): boolean {
  const negative = bytes[start] === MINUS;
  const from = negative ? start + 1 : start;
  if (end - from < LONG_DIGITS) return true;
  const bound = negative ? INT64_MIN_DIGITS : INT64_MAX_DIGITS;
  for (let at = 0; at < LONG_DIGITS; at++) {
    const digit = bytes[from + at] as number;
    const most = bound[at] as number;
    if (digit !== most) return digit < most;
  }
  return true;
}

const INT64_MAX_DIGITS = Buffer.from("9223372036854775807");
const INT64_MIN_DIGITS = Buffer.from("9223372036854775808");

/** Whether bytes[start, end) are `other`'s, compared from the end: ids near one another differ there. */
function sameBytes(bytes: Uint8Array, start: number, end: number, other: Uint8Array): boolean {
  if (end - start !== other.length) return false;
  for (let k = other.length - 1; k >= 0; k--) if (bytes[start + k] !== other[k]) return false;
  return true;
}
