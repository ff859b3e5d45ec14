import type { SeedOrder } from "./order-record.ts";
import type { OrderStatus } from "./order-status.ts";

/** The key of generated worlds unless others are given: the bundled fixtures' documented dev key. */
export const GENERATED_API_KEY = "dev-key-123";
export const DEFAULT_GENERATE_SEED = 1;
/**
 * Well past any store a test needs, and a list this machine serves: about 1 GB in one answer, made in about
 * a minute (50,000,000 would need a list body past the 4 GiB one typed array holds).
 */
export const MAX_GENERATED_ORDERS = 10_000_000;

const DAY_MS = 24 * 60 * 60 * 1000;
// Ship dates spread over a year around this day; orders due before it have shipped.
const REFERENCE_DAY = Date.UTC(2026, 10, 1);
// The last hundredth of a world's ids lie beyond 2^53, so that large worlds exercise exact int64 handling too.
const BEYOND_DOUBLES = 2n ** 53n;

/**
 * A world of `count` orders, made the same way from the same seed on every machine: unique ascending ids
 * (the last hundredth beyond 2^53), about two in five pending, the rest shipped, pet ids in the thousands,
 * quantities mostly 1 to 3, ship dates over the year around November 2026. Every order is valid against
 * the Order schema.
 */
export function* generateOrders(count: number, seed = DEFAULT_GENERATE_SEED): Generator<SeedOrder> {
  for (const order of generatedValues(count, seed))
    yield {
      record: {
        id: BigInt(order.id),
        petId: BigInt(order.petId),
        quantity: BigInt(order.quantity),
        shipDate: order.shipDate,
        complete: order.status === "shipped",
      },
      status: order.status,
    };
}

/** One generated order as plain values; `id` a number while it is below 2^53. */
export interface GeneratedOrder {
  id: number | bigint;
  petId: number;
  quantity: number;
  shipDate: string;
  status: OrderStatus;
}

/**
 * The generated orders as plain values, for writers that make their text without a record in between
 * (a million-order world is made several times faster so).
 */
export function* generatedValues(count: number, seed = DEFAULT_GENERATE_SEED): Generator<GeneratedOrder> {
  const random = mulberry32(seed);
  const beyondFrom = count - Math.floor(count / 100);
  let id = 0;
  let beyond = 0n;
  for (let index = 0; index < count; index++) {
    if (index < beyondFrom) id += 1 + Math.floor(random() * 3);
    else
      beyond =
        index === beyondFrom ? BEYOND_DOUBLES + BigInt(id) : beyond + 1n + BigInt(Math.floor(random() * 3));
    const offsetDays = Math.floor(random() * 365) - 240;
    const shipDate = shipDateText(offsetDays, Math.floor(random() * DAY_MS));
    // Orders due before the reference day have shipped, save a few still pending; later ones are pending.
    const status: OrderStatus = offsetDays < 0 && random() > 0.1 ? "shipped" : "pending";
    const quantity = 1 + Math.floor(random() ** 2 * 5);
    const petId = 1000 + Math.floor(random() * 90_000);
    yield { id: index < beyondFrom ? id : beyond, petId, quantity, shipDate, status };
  }
}

/** `YYYY-MM-DDTHH:MM:SSZ`, as `toISOString` gives it without milliseconds, from the day and the time in it. */
function shipDateText(offsetDays: number, msInDay: number): string {
  const day = DAY_PREFIXES[offsetDays + 240] as string;
  const seconds = Math.floor(msInDay / 1000);
  return `${day}${TWO_DIGITS[Math.floor(seconds / 3600)]}:${TWO_DIGITS[Math.floor(seconds / 60) % 60]}:${TWO_DIGITS[seconds % 60]}Z`;
}

// `YYYY-MM-DDT` of each day a ship date can fall on, 240 days before the reference day to 124 after.
const DAY_PREFIXES = Array.from({ length: 365 }, (_, day) =>
  new Date(REFERENCE_DAY + (day - 240) * DAY_MS).toISOString().slice(0, 11),
);
const TWO_DIGITS = Array.from({ length: 60 }, (_, value) => String(value).padStart(2, "0"));

/** An order's JSON as the store serializes its record: its fields in the Order schema's order. */
export function generatedRecordJson(order: GeneratedOrder): string {
  return `{"id":${order.id},"petId":${order.petId},"quantity":${order.quantity},"shipDate":"${order.shipDate}","complete":${order.status === "shipped"}}`;
}

/**
 * A generated world as fixture file text, in pieces of about a mebibyte, so that a world of millions of
 * orders is written without its whole text in memory.
 */
export function* generatedFixtureText(
  count: number,
  seed = DEFAULT_GENERATE_SEED,
  apiKeys: readonly string[] = [GENERATED_API_KEY],
): Generator<string> {
  let text = `{"apiKeys":${JSON.stringify(apiKeys)},"orders":[`;
  let first = true;
  for (const order of generatedValues(count, seed)) {
    text += `${first ? "\n" : ",\n"}${generatedRecordJson(order).slice(0, -1)},"status":"${order.status}"}`;
    first = false;
    if (text.length >= 1 << 20) {
      yield text;
      text = "";
    }
  }
  yield `${text}\n]}\n`;
}

/** A small, fast generator with a 32-bit state: the same seed gives the same numbers everywhere. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
