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
  const random = mulberry32(seed);
  const beyondFrom = count - Math.floor(count / 100);
  let id = 0n;
  for (let index = 0; index < count; index++) {
    id = index === beyondFrom ? BEYOND_DOUBLES + id : id + 1n + BigInt(Math.floor(random() * 3));
    const offsetDays = Math.floor(random() * 365) - 240;
    const shipDate = new Date(REFERENCE_DAY + offsetDays * DAY_MS + Math.floor(random() * DAY_MS));
    // Orders due before the reference day have shipped, save a few still pending; later ones are pending.
    const status: OrderStatus = offsetDays < 0 && random() > 0.1 ? "shipped" : "pending";
    const quantity = 1 + Math.floor(random() ** 2 * 5);
    yield {
      record: {
        id,
        petId: BigInt(1000 + Math.floor(random() * 90_000)),
        quantity: BigInt(quantity),
        shipDate: `${shipDate.toISOString().slice(0, 19)}Z`,
        complete: status === "shipped",
      },
      status,
    };
  }
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
  for (const { record, status } of generateOrders(count, seed)) {
    text += `${first ? "\n" : ",\n"}{"id":${record.id},"petId":${record.petId},"quantity":${record.quantity},"shipDate":"${record.shipDate}","complete":${record.complete},"status":"${status}"}`;
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
