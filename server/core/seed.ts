import { bigintOf, halvesOfBigint, Int64Index } from "../../contract/int64-index.ts";
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
  /** The listOrders body of an unchanged world. */
  readonly listBody: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const STATUS_CODES = new Map<OrderStatus, number>(ORDER_STATUSES.map((status, code) => [status, code]));
const OPEN = 0x5b;
const COMMA = 0x2c;
const CLOSE = 0x5d;

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
    const start = this.starts[place] as number;
    // Each order's JSON ends where the comma before the next one (or the closing bracket) stands.
    const end = place + 1 < this.ids.size ? (this.starts[place + 1] as number) - 1 : this.listBody.length - 1;
    return {
      key: key ?? bigintOf(this.ids.hiAt(place), this.ids.loAt(place)).toString(),
      json: decoder.decode(this.listBody.subarray(start, end)),
      status: ORDER_STATUSES[this.statuses[place] as number] as OrderStatus,
    };
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
  #body = new Uint8Array(64 * 1024);
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
  constructor(ids?: Int64Index) {
    this.#ids = ids ?? new Int64Index();
    this.#indexed = ids !== undefined;
    this.#body[0] = OPEN;
  }

  add(order: SeedOrder): void {
    if (!this.#indexed) {
      const { hi, lo } = halvesOfBigint(order.record.id);
      if (this.#ids.add(hi, lo) < 0) throw new Error(`duplicate order id ${order.record.id}`);
    }
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
    this.#statuses[place] = STATUS_CODES.get(order.status) as number;
    const json = serializeRecord(order.record);
    // Room for the JSON however wide its characters: at most three bytes for each UTF-16 unit.
    this.#reserve(json.length * 3);
    this.#length += encoder.encodeInto(json, this.#body.subarray(this.#length)).written;
  }

  finish(): Seed {
    this.#write(CLOSE);
    // A copy of the exact length, so that the spare room of the last doubling is given back.
    return new CompactSeed(this.#body.slice(0, this.#length), this.#starts, this.#statuses, this.#ids);
  }

  #write(byte: number): void {
    this.#reserve(1);
    this.#body[this.#length++] = byte;
  }

  #reserve(bytes: number): void {
    if (this.#length + bytes <= this.#body.length) return;
    let capacity = this.#body.length * 2;
    while (capacity < this.#length + bytes) capacity *= 2;
    const body = new Uint8Array(capacity);
    body.set(this.#body.subarray(0, this.#length));
    this.#body = body;
  }
}

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
