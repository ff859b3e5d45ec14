import type { FlatFields } from "../../contract/flat-record.ts";
import { bigintOf, halvesOfBigint, type IdHalves, Int64Index } from "../../contract/int64-index.ts";
import { type SeedOrder, type StoredOrder, serializeRecord } from "./order-record.ts";
import { ORDER_STATUSES, type OrderStatus } from "./order-status.ts";

/**
 * The orders of a fixture as every world starts from them. A seed is never changed: worlds keep their
 * differences beside it, so a thousand worlds over one seed share its orders and its list body.
 *
 * It is held compactly: the list body itself, where each order's JSON begins in it, each status as a byte,
 * and the ids in typed arrays. An order as an object is made only when one is asked for, so a seed of a
 * million orders is a few large arrays and no millions of small objects for the garbage collector.
 */
export interface Seed {
  readonly size: number;
  /** The place of the order whose id has these digits, or undefined. */
  placeOf(key: string): number | undefined;
  /** The order at a place, made when asked; `key`: its id's digits, when the caller has them already. */
  orderAt(place: number, key?: string): StoredOrder;
  /** Every order in list order, each made as it is read. */
  all(): IterableIterator<StoredOrder>;
  /** The status of the order at a place, without making the order. */
  statusAt(place: number): OrderStatus;
  /** The listOrders body of an unchanged world. */
  readonly listBody: Uint8Array;
  /**
   * The JSON of the orders at places `from` to `to - 1` with the commas between them: a view of the list
   * body, not a copy.
   */
  bytesOf(from: number, to: number): Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const STATUS_CODES = new Map<OrderStatus, number>(ORDER_STATUSES.map((status, code) => [status, code]));
const OPEN = 0x5b;
const COMMA = 0x2c;
const CLOSE = 0x5d;
const OPEN_RECORD = 0x7b;
const CLOSE_RECORD = 0x7d;
// `"field":` as serializeRecord writes it, for each field of the Order schema.
const fieldHeaders = new Map<string, Uint8Array>();

class CompactSeed implements Seed {
  constructor(
    readonly listBody: Uint8Array,
    private readonly starts: Float64Array,
    private readonly statuses: Uint8Array,
    private readonly ids: Int64Index,
  ) {}

  get size(): number {
    return this.ids.size;
  }

  placeOf(key: string): number | undefined {
    const place = this.ids.placeOfText(key);
    return place === -1 ? undefined : place;
  }

  orderAt(place: number, key?: string): StoredOrder {
    return {
      key: key ?? bigintOf(this.ids.hiAt(place), this.ids.loAt(place)).toString(),
      json: decoder.decode(this.bytesOf(place, place + 1)),
      status: ORDER_STATUSES[this.statuses[place] as number] as OrderStatus,
    };
  }

  bytesOf(from: number, to: number): Uint8Array {
    const start = this.starts[from] as number;
    // Each order's JSON ends where the comma before the next one (or the closing bracket) stands.
    const end = to < this.ids.size ? (this.starts[to] as number) - 1 : this.listBody.length - 1;
    return this.listBody.subarray(start, end);
  }

  statusAt(place: number): OrderStatus {
    return ORDER_STATUSES[this.statuses[place] as number] as OrderStatus;
  }

  *all(): IterableIterator<StoredOrder> {
    for (let place = 0; place < this.ids.size; place++) yield this.orderAt(place);
  }
}

/**
 * A seed made one order at a time, as a fixture file streams in or a world is generated: each order's JSON
 * is written straight into the list body as it comes.
 */
export class SeedBuilder {
  #body: Uint8Array;
  #length = 1;
  #starts = new Float64Array(1024);
  #statuses = new Uint8Array(1024);
  #count = 0;
  readonly #ids: Int64Index;
  readonly #indexed: boolean;

  /**
   * `ids`: an index the caller fills itself, one id per order it adds and in the same order (a reader that
   * keeps one to find duplicates), so that it is not made twice.
   */
  constructor(ids?: Int64Index, expectedBytes = 0) {
    this.#ids = ids ?? new Int64Index();
    this.#indexed = ids !== undefined;
    this.#body = new Uint8Array(Math.min(MAX_LIST_BYTES, Math.max(64 * 1024, expectedBytes)));
    this.#body[0] = OPEN;
  }

  add(order: SeedOrder): void {
    this.addJson(halvesOfBigint(order.record.id), serializeRecord(order.record), order.status);
  }

  /** An order its caller has written as `serializeRecord` would write its record, with its id's halves. */
  addJson({ hi, lo }: IdHalves, json: string, status: OrderStatus): void {
    if (!this.#indexed && this.#ids.add(hi, lo) < 0)
      throw new Error(`duplicate order id ${bigintOf(hi, lo)}`);
    this.#next(status);
    // Room for the JSON however wide its characters: at most three bytes for each UTF-16 unit.
    this.#reserve(json.length * 3);
    // Most records are ASCII: copied by character, cheaper for a hundred bytes than an encoder call.
    const body = this.#body;
    let at = this.#length;
    for (let k = 0; k < json.length; k++) {
      const code = json.charCodeAt(k);
      if (code > 0x7f) {
        this.#length += encoder.encodeInto(json, body.subarray(this.#length)).written;
        return;
      }
      body[at++] = code;
    }
    this.#length = at;
  }

  /**
   * A valid flat order from its bytes (the caller indexes its id), written as `add` would write its record:
   * the record's fields in `recordFields` order, each value's JSON as it came, since a flat value's text is
   * already the one serializeRecord would give it (plain digits, ASCII strings with nothing to escape).
   */
  addFlat(fields: FlatFields, recordFields: readonly string[], status: OrderStatus): void {
    if (!this.#indexed) throw new Error("addFlat needs an index its caller fills");
    this.#next(status);
    const written = this.#asWritten(fields, recordFields);
    if (written !== -1) {
      // The record's fields came first, in order and with no white space: its bytes are the record's JSON.
      this.#reserve(written - fields.open + 1);
      // Byte by byte: a record is a hundred bytes, shorter than what a copy call costs to set up.
      const source = fields.bytes;
      const body = this.#body;
      let at = this.#length;
      for (let k = fields.open; k < written; k++) body[at++] = source[k] as number;
      body[at++] = CLOSE_RECORD;
      this.#length = at;
      return;
    }
    this.#write(OPEN_RECORD);
    let first = true;
    for (const name of recordFields) {
      const field = fields.indexOf(name);
      if (field === -1) continue;
      let header = fieldHeaders.get(name);
      if (header === undefined) {
        header = encoder.encode(`"${name}":`);
        fieldHeaders.set(name, header);
      }
      const start = fields.jsonStart(field);
      const end = fields.jsonEnd(field);
      this.#reserve(header.length + (end - start) + 2);
      if (!first) this.#body[this.#length++] = COMMA;
      first = false;
      this.#body.set(header, this.#length);
      this.#length += header.length;
      this.#body.set(fields.bytes.subarray(start, end), this.#length);
      this.#length += end - start;
    }
    this.#write(CLOSE_RECORD);
  }

  /**
   * Where the record's JSON ends in the object's own bytes, when the object begins with the record's fields
   * in `recordFields` order, written as serializeRecord writes them (no white space), or -1. Only the gaps
   * need looking at: a key and a value are the bytes the scanner read them from.
   */
  #asWritten(fields: FlatFields, recordFields: readonly string[]): number {
    let end = fields.open + 1;
    let field = 0;
    for (const name of recordFields) {
      if (field < fields.count && fields.keys[field] === name) {
        // `{"` or `,"`, the key, `":`: anything longer holds white space.
        if (fields.jsonStart(field) - end !== name.length + 3 + (field === 0 ? 0 : 1)) return -1;
        end = fields.jsonEnd(field);
        field++;
      } else if (fields.indexOf(name) !== -1) return -1;
    }
    // Every record field was found in its place above; what follows (the status) is left out.
    return field === 0 ? -1 : end;
  }

  /** The next place: its start in the body and its status. */
  #next(status: OrderStatus): void {
    const place = this.#count++;
    if (place === this.#starts.length) {
      const starts = new Float64Array(place * 2);
      starts.set(this.#starts);
      this.#starts = starts;
      const statuses = new Uint8Array(place * 2);
      statuses.set(this.#statuses);
      this.#statuses = statuses;
    }
    if (place > 0) this.#write(COMMA);
    this.#starts[place] = this.#length;
    this.#statuses[place] = STATUS_CODES.get(status) as number;
  }

  finish(): Seed {
    this.#write(CLOSE);
    // Much spare room (a doubling's, or a file's statuses and white space) is given back by a copy of the
    // exact length; a little is kept rather than copying a hundred megabytes to save it.
    const spare = this.#body.length - this.#length;
    const body =
      spare > this.#length / 8 ? this.#body.slice(0, this.#length) : this.#body.subarray(0, this.#length);
    return new CompactSeed(body, this.#starts, this.#statuses, this.#ids);
  }

  #write(byte: number): void {
    this.#reserve(1);
    this.#body[this.#length++] = byte;
  }

  #reserve(bytes: number): void {
    const needed = this.#length + bytes;
    if (needed <= this.#body.length) return;
    if (needed > MAX_LIST_BYTES) {
      throw new Error(
        `the list of orders would be larger than ${MAX_LIST_BYTES / 1024 ** 3} GiB, the most one answer can hold`,
      );
    }
    let capacity = this.#body.length * 2;
    while (capacity < needed) capacity *= 2;
    capacity = Math.min(capacity, MAX_LIST_BYTES);
    const body = new Uint8Array(capacity);
    body.set(this.#body.subarray(0, this.#length));
    this.#body = body;
  }
}

/** The longest typed array, so the longest list body a world can serve in one answer. */
export const MAX_LIST_BYTES = 2 ** 32;

export function createSeed(orders: Iterable<SeedOrder>): Seed {
  const builder = new SeedBuilder();
  for (const order of orders) builder.add(order);
  return builder.finish();
}

export function encodeList(orders: Iterable<StoredOrder>): Uint8Array {
  let body = "[";
  for (const order of orders) body += body.length === 1 ? order.json : `,${order.json}`;
  return encoder.encode(`${body}]`);
}
