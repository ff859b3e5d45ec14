import { LosslessNumber } from "lossless-json";
import {
  FlatFields,
  KIND_FALSE,
  KIND_LONG_INTEGER,
  KIND_NULL,
  KIND_NUMBER,
  KIND_STRING,
  KIND_TRUE,
  MAX_FLAT_FIELDS,
  MAX_LONG_INTEGER_DIGITS,
} from "./flat-record.ts";

/**
 * JSON read as a stream of bytes, exactly as `parseExact` reads a whole text (numbers of more than 15
 * digits, fractions and exponents as LosslessNumber, duplicate keys refused), with three differences that
 * make any size possible:
 * - the elements of one array (the root array, or an array field of the root object) are handed to
 *   `onElement` as each one ends, and never kept;
 * - chunks may end anywhere: inside a number, a string, an escape or a multi-byte UTF-8 character;
 * - nesting is bounded by `maxDepth` and walked with an explicit stack, so a hostile body cannot overflow
 *   the call stack.
 * Errors name their byte offset.
 */

export interface JsonStreamOptions {
  /** Each element of the streamed array, with its index. */
  onElement: (value: unknown, index: number) => void;
  /**
   * Each element of the streamed array that is a flat object lying whole in one chunk, read from its bytes
   * with no object made. Returning false hands the element to `onElement` instead, read the ordinary way.
   */
  onFlatElement?: (fields: FlatFields, index: number) => boolean;
  /**
   * Flat elements may hold integers of 16 to 19 digits, as KIND_LONG_INTEGER (their digits, no value):
   * for a reader that needs no more of them than their text.
   */
  flatLongIntegers?: boolean;
  /** The root object's field whose array is streamed; without it, a root array is streamed. */
  field?: string;
  /** Containers nested deeper than this are refused (default 64). */
  maxDepth?: number;
  /** A string longer than this many bytes is refused (default 16 MiB): no order needs one. */
  maxStringBytes?: number;
  /** A number longer than this many characters is refused (default 4096). */
  maxNumberChars?: number;
  /** Skip a UTF-8 byte-order mark at the start (fixture files may have one; HTTP bodies may not). */
  allowBom?: boolean;
  /** Refuse a repeated key of the root object, even with an equal value (which lossless-json lets by). */
  refuseRepeatedRootKeys?: boolean;
  /**
   * The account the reading takes from before it makes what grows with its input: a string's bytes across
   * chunks, the strings, keys and containers of a value being built. With no room left, the reading stops
   * at that value with a `memory` limit rather than growing; what it took goes back once the streamed
   * array's element is handed on.
   */
  memory?: MemoryAccount;
}

/** Where memory is taken from and given back to (the proxy's --max-memory account is one). */
export interface MemoryAccount {
  /** Takes bytes when there is room for them; false, taking nothing, when not. */
  tryTake(bytes: number): boolean;
  /** Takes bytes whatever room is left, for what must be held (a few bounded records). */
  take?(bytes: number): void;
  give(bytes: number): void;
}

/**
 * What a streamed field holds in the root object once its array has gone by element by element: a value
 * of its own kind, so that a field of that name holding anything else (a number, an object) is not taken
 * for it, and a field streamed twice is never taken for one equal value.
 */
export class StreamedArray {
  constructor(readonly count: number) {}
}

/** A bound of the reader's own, not of JSON: what went past it, and the bound. */
export interface ReaderLimit {
  /** `memory`: the value being read needs more than the account (`memory`) has left; `bound` is what it had. */
  what: "depth" | "string" | "number" | "memory";
  bound: number;
}

/**
 * The text is not JSON, or breaks a bound of the reader (`limit`: then the text may well be JSON); `offset`
 * is the byte where it went wrong.
 */
export class JsonStreamError extends Error {
  override name = "JsonStreamError";
  constructor(
    message: string,
    readonly offset: number,
    readonly limit?: ReaderLimit,
  ) {
    super(`${message} at byte ${offset}`);
  }
}

export const DEFAULT_MAX_DEPTH = 64;
export const DEFAULT_MAX_STRING_BYTES = 16 * 1024 * 1024;
/** Characters of one number at most: an int64 needs 20; a longer one is held as text while it is read. */
export const DEFAULT_MAX_NUMBER_CHARS = 4096;

enum State {
  Value,
  AfterValue,
  Key,
  Colon,
  String,
  Number,
  Literal,
  Done,
}

interface Frame {
  array: boolean;
  /** The container being built; null for the streamed array, whose elements are handed on. */
  value: unknown[] | Record<string, unknown> | null;
  /** The key waiting for its value, in an object. */
  key: string;
  keyAt: number;
  count: number;
}

const QUOTE = 0x22;
// What a value being built is reckoned to cost beside its text, near what V8 makes of it: a slot in an
// array, a field of an object (a dictionary's entry with its share of the table, and the key's string), a
// container, a string's header.
const ARRAY_SLOT_COST = 16;
const FIELD_COST = 96;
const CONTAINER_COST = 64;
const STRING_COST = 16;
// Taken from the account this much at a time, so that an ordinary order costs no call to it.
const CHARGE_STEP = 64 * 1024;
// A string's scratch larger than this is let go of once the string is read, and its bytes given back.
const SCRATCH_KEPT_BYTES = 64 * 1024;
const SCRATCH_START_BYTES = 256;
const MAX_CACHED_KEY_BYTES = 32;
const MAX_CACHED_KEYS = 256;
const BACKSLASH = 0x5c;
const NUMBER_GRAMMAR = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const LITERALS: Record<number, { word: string; value: unknown }> = {
  116: { word: "true", value: true },
  102: { word: "false", value: false },
  110: { word: "null", value: null },
};
const ESCAPES: Record<number, string> = {
  34: '"',
  92: "\\",
  47: "/",
  98: "\b",
  102: "\f",
  110: "\n",
  114: "\r",
  116: "\t",
};

/** Deep equality as lossless-json judges repeated keys, walked without recursion. */
function deepEqual(first: unknown, second: unknown): boolean {
  const pending: Array<[unknown, unknown]> = [[first, second]];
  while (pending.length > 0) {
    const [a, b] = pending.pop() as [unknown, unknown];
    if (a === b) continue;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys)
      pending.push([(a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]]);
  }
  return true;
}

function matchesAt(chunk: Buffer, at: number, word: string): boolean {
  for (let k = 1; k < word.length; k++) if (chunk[at + k] !== word.charCodeAt(k)) return false;
  return true;
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function describeByte(byte: number): string {
  return byte >= 0x20 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16)}`;
}

export class JsonStream {
  readonly #onElement: JsonStreamOptions["onElement"];
  readonly #onFlatElement: JsonStreamOptions["onFlatElement"];
  readonly #flatLongIntegers: boolean;
  readonly #flat = new FlatFields();
  readonly #field: string | undefined;
  readonly #maxDepth: number;
  readonly #maxStringBytes: number;
  readonly #maxNumberChars: number;
  #allowBom: boolean;
  readonly #refuseRepeatedRootKeys: boolean;
  #state = State.Value;
  readonly #stack: Frame[] = [];
  /** Bytes of the chunks before the current one. */
  #base = 0;
  #root: unknown;
  // A string across chunks or with escapes: its raw bytes, decoded when it ends.
  #scratch = Buffer.allocUnsafe(SCRATCH_START_BYTES);
  /** What the scratch took from the account beyond its first size. */
  #scratchCharged = 0;
  readonly #memory: MemoryAccount | undefined;
  /** What the value being built is reckoned to cost, and what of that was taken from the account. */
  #building = 0;
  #charged = 0;
  #scratchLength = 0;
  #escaped = false;
  #stringIsKey = false;
  #stringStart = 0;
  // A number across chunks: its text so far.
  #numberText = "";
  #numberStart = 0;
  #digitsValue = 0;
  // A literal across chunks: the word and how much of it matched.
  #literal = "";
  #literalValue: unknown = null;
  #literalAt = 0;
  #literalStart = 0;
  // An empty array may close straight after it opens; after a comma a value must follow.
  #afterOpen = false;
  readonly #keys = new Map<number, { bytes: Buffer; text: string }>();
  /**
   * Whether the streamed array began: then `end()` gives the count of its elements in its place (a root
   * array), or a StreamedArray in the field's place (a field's).
   */
  streamedArray = false;
  /** The first byte of the root value once it began: a text cut short still says what its root is. */
  rootFirstByte: number | undefined;
  /** Where the streamed array's latest element began, in bytes from the start of the text. */
  elementStart = 0;
  /** How many LosslessNumbers were made: a value made while this did not move holds none. */
  exactNumbers = 0;
  /** What the latest element of the streamed array was reckoned to cost, in bytes (with an account only). */
  elementBytes = 0;

  constructor(options: JsonStreamOptions) {
    this.#onElement = options.onElement;
    this.#onFlatElement = options.onFlatElement;
    this.#flatLongIntegers = options.flatLongIntegers ?? false;
    this.#field = options.field;
    this.#maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.#maxStringBytes = options.maxStringBytes ?? DEFAULT_MAX_STRING_BYTES;
    this.#maxNumberChars = options.maxNumberChars ?? DEFAULT_MAX_NUMBER_CHARS;
    this.#allowBom = options.allowBom ?? false;
    this.#refuseRepeatedRootKeys = options.refuseRepeatedRootKeys ?? false;
    this.#memory = options.memory;
  }

  /** Gives back to the account all the reading still holds: at its end, or when it is given up. */
  release(): void {
    this.#memory?.give(this.#charged + this.#scratchCharged);
    this.#charged = 0;
    this.#building = 0;
    this.#scratchCharged = 0;
    this.#scratch = Buffer.allocUnsafe(SCRATCH_START_BYTES);
  }

  /** Reckons `bytes` more to the value being built, taking them from the account a step at a time. */
  #cost(bytes: number): void {
    this.#building += bytes;
    if (this.#building - this.#charged < CHARGE_STEP) return;
    const more = this.#building - this.#charged;
    if (!(this.#memory as MemoryAccount).tryTake(more)) throw this.#overMemory();
    this.#charged += more;
  }

  #overMemory(): JsonStreamError {
    return new JsonStreamError(
      "a value needing more memory than the budget has left",
      this.#stack.length > 0 ? this.elementStart : this.#base,
      { what: "memory", bound: this.#building },
    );
  }

  /** The element was handed on: what it took goes back. */
  #elementDone(): void {
    if (this.#charged > 0) (this.#memory as MemoryAccount).give(this.#charged);
    this.#charged = 0;
    this.#building = 0;
  }

  write(input: Uint8Array): void {
    const chunk = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.length);
    let i = 0;
    const length = chunk.length;
    if (this.#allowBom && this.#base === 0 && length > 0) {
      // A mark split across chunks is not worth the state: fixture files are read in large chunks.
      if (length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
      this.#allowBom = false;
    }
    while (i < length) {
      switch (this.#state) {
        case State.Value:
          i = this.#value(chunk, i);
          break;
        case State.AfterValue:
          i = this.#afterValue(chunk, i);
          break;
        case State.Key: {
          const byte = chunk[i] as number;
          if (isWhitespace(byte)) i++;
          else if (byte === QUOTE) {
            this.#stringIsKey = true;
            this.#stringStart = this.#base + i;
            i = this.#key(chunk, i + 1);
          } else if (byte === 0x7d && (this.#stack.at(-1) as Frame).count === 0) {
            i++;
            this.#close();
          } else throw this.#unexpected(byte, i, "a quoted object key");
          break;
        }
        case State.Colon: {
          const byte = chunk[i] as number;
          if (isWhitespace(byte)) i++;
          else if (byte === 0x3a) {
            i++;
            this.#state = State.Value;
          } else throw this.#unexpected(byte, i, "':'");
          break;
        }
        case State.String:
          i = this.#stringSlow(chunk, i);
          break;
        case State.Number:
          i = this.#numberSlow(chunk, i);
          break;
        case State.Literal:
          i = this.#literalSlow(chunk, i);
          break;
        case State.Done: {
          const byte = chunk[i] as number;
          if (!isWhitespace(byte)) throw this.#unexpected(byte, i, "the end of the JSON text");
          i++;
          break;
        }
      }
    }
    this.#base += length;
  }

  /** The end of the text: the root value (the streamed array itself is given as the count of its elements). */
  end(): unknown {
    if (this.#state === State.Number) {
      this.#finishNumber(this.#numberText, this.#numberStart);
    }
    if (this.#state !== State.Done) {
      throw new JsonStreamError(
        this.#state === State.String
          ? "unterminated string"
          : this.#state === State.Value && this.#stack.length === 0
            ? "empty JSON text"
            : "unexpected end of the JSON text",
        this.#base,
      );
    }
    return this.#root;
  }

  #unexpected(byte: number, i: number, expected: string): JsonStreamError {
    return new JsonStreamError(`expected ${expected}, got ${describeByte(byte)}`, this.#base + i);
  }

  #value(chunk: Buffer, start: number): number {
    let i = start;
    const length = chunk.length;
    let byte = chunk[i] as number;
    while (isWhitespace(byte)) {
      if (++i === length) return i;
      byte = chunk[i] as number;
    }
    const top = this.#stack.at(-1);
    if (top === undefined) this.rootFirstByte ??= byte;
    else if (top.value === null) this.elementStart = this.#base + i;
    if (byte === QUOTE) {
      this.#stringIsKey = false;
      this.#stringStart = this.#base + i;
      return this.#string(chunk, i + 1);
    }
    if (byte === 0x7b && top?.value === null && this.#onFlatElement !== undefined) {
      const end = this.#flatObject(chunk, i);
      if (end !== -1 && this.#onFlatElement(this.#flat, top.count)) {
        top.count++;
        this.#state = State.AfterValue;
        this.#afterOpen = false;
        return end;
      }
    }
    if (byte === 0x7b || byte === 0x5b) {
      this.#open(byte === 0x5b, i);
      return i + 1;
    }
    if (byte === 0x5d && top?.array && this.#afterOpen) {
      this.#close();
      return i + 1;
    }
    if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) return this.#number(chunk, i);
    const literal = LITERALS[byte];
    if (literal) {
      const word = literal.word;
      if (i + word.length <= length && matchesAt(chunk, i, word)) {
        this.#emit(literal.value);
        return i + word.length;
      }
      this.#literal = literal.word;
      this.#literalValue = literal.value;
      this.#literalAt = 0;
      this.#literalStart = this.#base + i;
      this.#state = State.Literal;
      return this.#literalSlow(chunk, i);
    }
    throw this.#unexpected(byte, i, "a JSON value");
  }

  #open(array: boolean, i: number): void {
    if (this.#stack.length >= this.#maxDepth) {
      throw new JsonStreamError(`nested deeper than ${this.#maxDepth} levels`, this.#base + i, {
        what: "depth",
        bound: this.#maxDepth,
      });
    }
    const streamed =
      array &&
      (this.#field === undefined
        ? this.#stack.length === 0
        : this.#stack.length === 1 && (this.#stack[0] as Frame).key === this.#field);
    if (streamed) this.streamedArray = true;
    else if (this.#memory !== undefined) this.#cost(CONTAINER_COST);
    this.#stack.push({
      array,
      value: streamed ? null : array ? [] : {},
      key: "",
      keyAt: 0,
      count: 0,
    });
    this.#state = array ? State.Value : State.Key;
    this.#afterOpen = array;
  }

  #close(): void {
    const frame = this.#stack.pop() as Frame;
    if (frame.value !== null) this.#emit(frame.value);
    else this.#emit(this.#field === undefined ? frame.count : new StreamedArray(frame.count));
  }

  #afterValue(chunk: Buffer, start: number): number {
    let i = start;
    const byte = chunk[i] as number;
    if (isWhitespace(byte)) return i + 1;
    const top = this.#stack.at(-1) as Frame;
    if (byte === 0x2c) {
      i++;
      this.#state = top.array ? State.Value : State.Key;
      this.#afterOpen = false;
      return i;
    }
    if ((byte === 0x5d && top.array) || (byte === 0x7d && !top.array)) {
      this.#close();
      return i + 1;
    }
    throw this.#unexpected(byte, i, top.array ? "',' or ']'" : "',' or '}'");
  }

  #emit(value: unknown): void {
    const top = this.#stack.at(-1);
    if (top === undefined) {
      this.#root = value;
      this.#state = State.Done;
      return;
    }
    this.#state = State.AfterValue;
    if (top.array) {
      if (top.value === null) {
        if (this.#memory !== undefined) this.elementBytes = this.#building;
        this.#onElement(value, top.count);
        if (this.#memory !== undefined) this.#elementDone();
      } else {
        if (this.#memory !== undefined) this.#cost(ARRAY_SLOT_COST);
        (top.value as unknown[]).push(value);
      }
      top.count++;
      return;
    }
    const object = top.value as Record<string, unknown>;
    const key = top.key;
    if (this.#memory !== undefined) this.#cost(FIELD_COST + key.length);
    // As lossless-json: a key may repeat with an equal value; with another value the text is refused. A
    // streamed array's elements are gone, so it equals nothing.
    const repeated =
      Object.hasOwn(object, key) &&
      ((this.#refuseRepeatedRootKeys && this.#stack.length === 1) ||
        value instanceof StreamedArray ||
        object[key] instanceof StreamedArray ||
        !deepEqual(object[key], value));
    if (repeated) {
      throw new JsonStreamError(`duplicate key ${JSON.stringify(key)}`, top.keyAt);
    }
    if (key === "__proto__") {
      // An ordinary property, as JSON.parse makes it, never a change of prototype.
      Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
    } else object[key] = value;
    top.count++;
  }

  #keyRead(key: string, offset: number): void {
    const top = this.#stack.at(-1) as Frame;
    top.key = key;
    top.keyAt = offset;
    this.#state = State.Colon;
  }

  /**
   * A key from just after its opening quote. Every order repeats the same few keys, so a short key seen
   * before is taken from a cache after comparing its bytes, instead of being decoded again.
   */
  #key(chunk: Buffer, start: number): number {
    const length = chunk.length;
    let i = start;
    let hash = 0;
    while (i < length) {
      const byte = chunk[i] as number;
      if (byte === QUOTE) break;
      if (byte === BACKSLASH || byte < 0x20 || i - start > MAX_CACHED_KEY_BYTES)
        return this.#string(chunk, start);
      hash = (Math.imul(hash, 31) + byte) | 0;
      i++;
    }
    if (i === length) return this.#string(chunk, start);
    this.#keyRead(this.#cachedKey(chunk, start, i, hash), this.#stringStart);
    return i + 1;
  }

  /** A short key without escapes, from the cache when its bytes were seen before. */
  #cachedKey(chunk: Buffer, start: number, end: number, hash: number): string {
    const size = end - start;
    const cached = this.#keys.get(hash);
    if (cached !== undefined && cached.bytes.length === size) {
      let same = true;
      for (let k = 0; k < size; k++) {
        if (cached.bytes[k] !== chunk[start + k]) {
          same = false;
          break;
        }
      }
      if (same) return cached.text;
    }
    const text = chunk.toString("utf8", start, end);
    if (this.#keys.size < MAX_CACHED_KEYS)
      this.#keys.set(hash, { bytes: Buffer.from(chunk.subarray(start, end)), text });
    return text;
  }

  /**
   * A flat object from its opening brace, when it lies whole in this chunk: its end, or -1 for anything
   * the ordinary reading must judge (nesting, escapes, non-ASCII text, long or fractional numbers, -0, a
   * repeated key, a syntax error), which then reads it again from the brace.
   */
  #flatObject(chunk: Buffer, open: number): number {
    const fields = this.#flat;
    const length = chunk.length;
    let i = open + 1;
    let count = 0;
    while (i < length && isWhitespace(chunk[i] as number)) i++;
    if (chunk[i] === 0x7d) {
      fields.count = 0;
      return i + 1;
    }
    for (;;) {
      if (count === MAX_FLAT_FIELDS || chunk[i] !== QUOTE) return -1;
      const keyStart = ++i;
      let hash = 0;
      for (;;) {
        if (i === length) return -1;
        const byte = chunk[i] as number;
        if (byte === QUOTE) break;
        if (byte === BACKSLASH || byte < 0x20 || byte >= 0x80) return -1;
        hash = (Math.imul(hash, 31) + byte) | 0;
        i++;
      }
      if (i - keyStart > MAX_CACHED_KEY_BYTES) return -1;
      const key = this.#cachedKey(chunk, keyStart, i, hash);
      if (key === "__proto__") return -1;
      for (let k = 0; k < count; k++) if (fields.keys[k] === key) return -1;
      i++;
      while (i < length && isWhitespace(chunk[i] as number)) i++;
      if (chunk[i] !== 0x3a) return -1;
      i++;
      while (i < length && isWhitespace(chunk[i] as number)) i++;
      if (i === length) return -1;
      const first = chunk[i] as number;
      if (first === QUOTE) {
        const valueStart = ++i;
        for (;;) {
          if (i === length) return -1;
          const byte = chunk[i] as number;
          if (byte === QUOTE) break;
          if (byte === BACKSLASH || byte < 0x20 || byte >= 0x80) return -1;
          i++;
        }
        // A string past the bound is read the ordinary way, which refuses it.
        if (i - valueStart > this.#maxStringBytes) return -1;
        fields.kinds[count] = KIND_STRING;
        fields.starts[count] = valueStart;
        fields.ends[count] = i;
        i++;
      } else if (first === 0x2d || (first >= 0x30 && first <= 0x39)) {
        const negative = first === 0x2d;
        if (negative) i++;
        const digitsStart = i;
        i = this.#digits(chunk, i);
        const value = this.#digitsValue;
        const digits = i - digitsStart;
        const long = digits > 15 && digits <= MAX_LONG_INTEGER_DIGITS && this.#flatLongIntegers;
        if (i === length || digits === 0 || (digits > 15 && !long)) return -1;
        if (chunk[digitsStart] === 0x30 && (digits > 1 || negative)) return -1;
        const next = chunk[i] as number;
        if (next === 0x2e || next === 0x65 || next === 0x45) return -1;
        fields.kinds[count] = long ? KIND_LONG_INTEGER : KIND_NUMBER;
        fields.numbers[count] = long ? Number.NaN : negative ? -value : value;
        fields.starts[count] = negative ? digitsStart - 1 : digitsStart;
        fields.ends[count] = i;
      } else {
        const start = i;
        if (first === 0x74 && i + 4 <= length && matchesAt(chunk, i, "true")) {
          fields.kinds[count] = KIND_TRUE;
          i += 4;
        } else if (first === 0x66 && i + 5 <= length && matchesAt(chunk, i, "false")) {
          fields.kinds[count] = KIND_FALSE;
          i += 5;
        } else if (first === 0x6e && i + 4 <= length && matchesAt(chunk, i, "null")) {
          fields.kinds[count] = KIND_NULL;
          i += 4;
        } else return -1;
        fields.starts[count] = start;
        fields.ends[count] = i;
      }
      fields.keys[count++] = key;
      while (i < length && isWhitespace(chunk[i] as number)) i++;
      if (i === length) return -1;
      const after = chunk[i++] as number;
      if (after === 0x7d) break;
      if (after !== 0x2c) return -1;
      while (i < length && isWhitespace(chunk[i] as number)) i++;
    }
    fields.count = count;
    fields.bytes = chunk;
    fields.open = open;
    return i;
  }

  /** A string from just after its opening quote: read whole from this chunk when it can be. */
  #string(chunk: Buffer, start: number): number {
    const length = chunk.length;
    let i = start;
    while (i < length) {
      const byte = chunk[i] as number;
      if (byte === QUOTE) {
        if (i - start > this.#maxStringBytes) {
          throw new JsonStreamError(`a string longer than ${this.#maxStringBytes} bytes`, this.#stringStart, {
            what: "string",
            bound: this.#maxStringBytes,
          });
        }
        if (this.#memory !== undefined) this.#cost(STRING_COST + i - start);
        this.#stringDone(chunk.toString("utf8", start, i));
        return i + 1;
      }
      if (byte === BACKSLASH || byte < 0x20) break;
      i++;
    }
    // Escapes, a control character, or the chunk's end: byte by byte from here.
    this.#scratchLength = 0;
    this.#escaped = false;
    this.#append(chunk, start, i);
    this.#state = State.String;
    return this.#stringSlow(chunk, i);
  }

  #stringSlow(chunk: Buffer, start: number): number {
    const length = chunk.length;
    let i = start;
    let escaped = this.#escaped;
    while (i < length) {
      const byte = chunk[i] as number;
      if (escaped) escaped = false;
      else if (byte === BACKSLASH) escaped = true;
      else if (byte === QUOTE) {
        this.#append(chunk, start, i);
        this.#escaped = false;
        if (this.#memory !== undefined) this.#cost(STRING_COST + this.#scratchLength);
        const text = this.#decodeScratch();
        if (this.#scratch.length > SCRATCH_KEPT_BYTES) this.#shrinkScratch();
        this.#stringDone(text);
        return i + 1;
      } else if (byte < 0x20) {
        throw new JsonStreamError(`control character 0x${byte.toString(16)} in a string`, this.#base + i);
      }
      i++;
    }
    this.#append(chunk, start, i);
    this.#escaped = escaped;
    return i;
  }

  #append(chunk: Buffer, start: number, end: number): void {
    const needed = this.#scratchLength + (end - start);
    if (needed > this.#maxStringBytes) {
      throw new JsonStreamError(`a string longer than ${this.#maxStringBytes} bytes`, this.#stringStart, {
        what: "string",
        bound: this.#maxStringBytes,
      });
    }
    if (needed > this.#scratch.length) {
      const size = Math.min(Math.max(needed, this.#scratch.length * 2), this.#maxStringBytes);
      // The new scratch is taken whole before it is made: the old one lives until it is copied.
      if (this.#memory !== undefined && !this.#memory.tryTake(size)) throw this.#overMemory();
      const grown = Buffer.allocUnsafe(size);
      this.#scratch.copy(grown, 0, 0, this.#scratchLength);
      this.#scratch = grown;
      if (this.#memory !== undefined) {
        this.#memory.give(this.#scratchCharged);
        this.#scratchCharged = size;
      }
    }
    chunk.copy(this.#scratch, this.#scratchLength, start, end);
    this.#scratchLength = needed;
  }

  #shrinkScratch(): void {
    this.#memory?.give(this.#scratchCharged);
    this.#scratchCharged = 0;
    this.#scratch = Buffer.allocUnsafe(SCRATCH_START_BYTES);
  }

  /** The raw bytes between the quotes, escapes resolved; UTF-8 decoded as Buffer#toString does. */
  #decodeScratch(): string {
    const bytes = this.#scratch;
    const end = this.#scratchLength;
    let text = "";
    let from = 0;
    let i = 0;
    while (i < end) {
      if (bytes[i] !== BACKSLASH) {
        i++;
        continue;
      }
      text += bytes.toString("utf8", from, i);
      const code = bytes[i + 1] as number;
      const simple = ESCAPES[code];
      if (simple !== undefined) {
        text += simple;
        i += 2;
      } else if (code === 0x75) {
        const hex = i + 6 <= end ? bytes.toString("latin1", i + 2, i + 6) : "";
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
          throw new JsonStreamError("invalid \\u escape in a string", this.#stringStart + 1 + i);
        }
        text += String.fromCharCode(Number.parseInt(hex, 16));
        i += 6;
      } else {
        throw new JsonStreamError(
          `invalid escape \\${String.fromCharCode(code)} in a string`,
          this.#stringStart + 1 + i,
        );
      }
      from = i;
    }
    return from === 0 ? bytes.toString("utf8", 0, end) : text + bytes.toString("utf8", from, end);
  }

  #stringDone(text: string): void {
    if (this.#stringIsKey) this.#keyRead(text, this.#stringStart);
    else this.#emit(text);
  }

  /** Where a run of digits ends; their value (exact up to 15 digits) is left in `#digitsValue`. */
  #digits(chunk: Buffer, start: number): number {
    let i = start;
    let value = 0;
    while (i < chunk.length) {
      const byte = chunk[i] as number;
      if (byte < 0x30 || byte > 0x39) break;
      value = value * 10 + (byte - 0x30);
      i++;
    }
    this.#digitsValue = value;
    return i;
  }

  /** A number: plain integers of up to 15 digits are made here without any text. */
  #number(chunk: Buffer, start: number): number {
    const length = chunk.length;
    let i = start;
    const negative = chunk[i] === 0x2d;
    if (negative) i++;
    const digitsStart = i;
    i = this.#digits(chunk, i);
    const value = this.#digitsValue;
    const digits = i - digitsStart;
    if (i < length) {
      const next = chunk[i] as number;
      const plain = next !== 0x2e && next !== 0x65 && next !== 0x45 && !(next >= 0x30 && next <= 0x39);
      if (plain && digits > 0 && digits <= 15 && !(digits > 1 && chunk[digitsStart] === 0x30)) {
        this.#emit(negative ? -value : value);
        return i;
      }
    }
    // Anything else (long, fractional, exponent, malformed, or cut by the chunk's end) goes by its text.
    this.#numberText = "";
    this.#numberStart = this.#base + start;
    this.#state = State.Number;
    return this.#numberSlow(chunk, start);
  }

  #numberSlow(chunk: Buffer, start: number): number {
    const length = chunk.length;
    let i = start;
    while (i < length) {
      const byte = chunk[i] as number;
      if (
        !(
          (byte >= 0x30 && byte <= 0x39) ||
          byte === 0x2d ||
          byte === 0x2b ||
          byte === 0x2e ||
          (byte | 0x20) === 0x65
        )
      )
        break;
      i++;
    }
    this.#numberText += chunk.toString("latin1", start, i);
    if (this.#numberText.length > this.#maxNumberChars)
      throw new JsonStreamError(
        `a number longer than ${this.#maxNumberChars} characters`,
        this.#numberStart,
        {
          what: "number",
          bound: this.#maxNumberChars,
        },
      );
    if (i < length) this.#finishNumber(this.#numberText, this.#numberStart);
    return i;
  }

  #finishNumber(text: string, offset: number): void {
    if (!NUMBER_GRAMMAR.test(text))
      throw new JsonStreamError(`invalid number '${text.slice(0, 40)}'`, offset);
    this.#numberText = "";
    if (/^-?\d{1,15}$/.test(text)) this.#emit(Number(text));
    else {
      this.exactNumbers++;
      this.#emit(new LosslessNumber(text));
    }
  }

  #literalSlow(chunk: Buffer, start: number): number {
    const word = this.#literal;
    let i = start;
    while (i < chunk.length && this.#literalAt < word.length) {
      if (chunk[i] !== word.charCodeAt(this.#literalAt)) {
        throw new JsonStreamError(`invalid literal (expected ${word})`, this.#literalStart);
      }
      this.#literalAt++;
      i++;
    }
    if (this.#literalAt === word.length) this.#emit(this.#literalValue);
    else this.#state = State.Literal;
    return i;
  }
}
