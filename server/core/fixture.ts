import type { ValidateFunction } from "ajv";
import { isToken68, TOKEN68_RULE } from "../../common/bearer.ts";
import { firstNonUtf8 } from "../../common/utf8.ts";
import type { Contract } from "../../contract/contract.ts";
import { isJsonNumber, numberText, parseExact } from "../../contract/exact-json.ts";
import { validateExact } from "../../contract/exact-validate.ts";
import {
  type FlatFields,
  type FlatRecordPlan,
  KIND_NUMBER,
  KIND_STRING,
} from "../../contract/flat-record.ts";
import { halvesOfBigint, halvesOfNumber, Int64Index } from "../../contract/int64-index.ts";
import { StreamedArray } from "../../contract/json-stream.ts";
import { type SeedOrder, type StoredOrderRecord, storedValue } from "./order-record.ts";
import { ORDER_STATUSES, type OrderStatus } from "./order-status.ts";

export interface Fixture {
  apiKeys: string[];
  orders: SeedOrder[];
}

/** A fixture file that cannot seed the mock; the message names the file, the order and the field. */
export class FixtureError extends Error {
  override name = "FixtureError";
}

const MAX_PROBLEMS_SHOWN = 10;
const FIXTURE_KEYS = ["apiKeys", "orders"];

export function parseFixture(bytes: Uint8Array, source: string, contract: Contract): Fixture {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new FixtureError(
      `${source}: the file is not valid UTF-8 text (at byte ${firstNonUtf8(bytes, false)})`,
    );
  }
  let document: unknown;
  try {
    document = parseExact(text);
    // A repeated top-level key is refused whatever its value, as the streamed reader must refuse it: the
    // orders of a streamed "orders" are gone by the time it repeats, so no two can be found equal.
    const repeated = isPlainObject(document) ? repeatedRootKey(text) : undefined;
    if (repeated)
      throw new SyntaxError(`Duplicate key '${repeated.key}' encountered at position ${repeated.position}`);
  } catch (error) {
    const reason = error instanceof RangeError ? "nested too deeply" : (error as Error).message;
    throw new FixtureError(`${source}: not valid JSON: ${reason}${positionHint(text, error)}`);
  }
  const problems: string[] = [];
  const orders = readDocument(document, contract, problems);
  throwProblems(source, problems);
  return { apiKeys: (document as { apiKeys?: string[] }).apiKeys ?? [], orders };
}

/** The first key of a JSON text's root object (the text known to be one) that repeats, with its position. */
function repeatedRootKey(text: string): { key: string; position: number } | undefined {
  const seen = new Set<string>();
  let depth = 0;
  let keyNext = false;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x22) {
      const start = at;
      for (at++; text.charCodeAt(at) !== 0x22; at++) if (text.charCodeAt(at) === 0x5c) at++;
      if (depth === 1 && keyNext) {
        const key = JSON.parse(text.slice(start, at + 1)) as string;
        if (seen.has(key)) return { key, position: start + 1 };
        seen.add(key);
        keyNext = false;
      }
    } else if (code === 0x7b || code === 0x5b) {
      depth++;
      if (depth === 1) keyNext = true;
    } else if (code === 0x7d || code === 0x5d) depth--;
    else if (code === 0x2c && depth === 1) keyNext = true;
  }
  return undefined;
}

/** Stops with every problem found, named by file, order and field (the first ten shown). */
export function throwProblems(source: string, problems: readonly string[]): void {
  if (problems.length === 0) return;
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => `  - ${problem}`);
  if (problems.length > MAX_PROBLEMS_SHOWN)
    shown.push(`  - … and ${problems.length - MAX_PROBLEMS_SHOWN} more`);
  throw new FixtureError(`${source}: invalid fixture:\n${shown.join("\n")}`);
}

/**
 * The top level of a fixture document: its fields and API keys, and its orders unless they were read
 * one by one as the file streamed in (then `orders` holds how many there were).
 */
export function readDocument(
  document: unknown,
  contract: Contract,
  problems: string[],
  streamed?: OrdersReader,
): SeedOrder[] {
  if (!isPlainObject(document)) {
    problems.push('the top level must be an object with "apiKeys" and "orders"');
    return [];
  }
  for (const key of Object.keys(document)) {
    if (!FIXTURE_KEYS.includes(key))
      problems.push(`unknown top-level field "${key}" (expected ${FIXTURE_KEYS.join(", ")})`);
  }
  checkApiKeys(document.apiKeys, problems);
  if (streamed && document.orders instanceof StreamedArray) return streamed.orders;
  return readOrders(document.orders, contract, problems);
}

/**
 * An `orders` array as fixture files write it, each order checked against the Order schema; problems name
 * the order (`orders[3] (id 12)`) and the field. State files keep a world's changed orders the same way.
 */
export function readOrders(list: unknown, contract: Contract, problems: string[]): SeedOrder[] {
  if (!Array.isArray(list)) {
    problems.push('field "orders": must be an array of orders');
    return [];
  }
  const reader = new OrdersReader(contract, problems);
  const entries: unknown[] = list;
  for (let index = 0; index < entries.length; index++) reader.add(entries[index], index);
  return reader.orders;
}

/** Where an OrdersReader hands each valid order, instead of keeping it. */
export interface OrderSink {
  add(order: SeedOrder): void;
  /** A valid flat order from its bytes, its record's fields to be written in `recordFields` order. */
  addFlat(fields: FlatFields, recordFields: readonly string[], status: OrderStatus): void;
}

/**
 * Orders checked one at a time, in the order they come: from a parsed array or from a file as it streams.
 * With a sink, each valid order is handed on and not kept here.
 */
export class OrdersReader {
  readonly orders: SeedOrder[] = [];
  /**
   * The valid orders' ids, in typed arrays rather than a map of strings, which counts at a million orders;
   * shared with a SeedBuilder as its index, since in a valid file the two agree place for place.
   */
  readonly ids: Int64Index;
  // The fixture's index of the order at each place of `ids`, for the message about a duplicate.
  readonly #indexes: number[] = [];
  readonly #context: OrderContext;

  constructor(
    contract: Contract,
    problems: string[],
    private readonly sink?: OrderSink,
    ids = new Int64Index(),
  ) {
    this.ids = ids;
    const orderFields = Object.keys(contract.document.components.schemas.Order?.properties ?? {});
    this.#context = {
      orderFields,
      knownFields: new Set([...orderFields, "status"]),
      validate: contract.schema("Order"),
      plan: contract.flatPlan("Order"),
      problems,
    };
  }

  /**
   * A flat order read from its bytes (JsonStream's onFlatElement), taken only when it is certainly valid:
   * known fields, a known status, an id, the Order schema's plan satisfied, an id not seen before. Anything
   * else is declined and read as an object by `add`, whose messages name the problem.
   */
  addFlat(fields: FlatFields, index: number): boolean {
    const context = this.#context;
    if (context.plan === undefined || this.sink === undefined) return false;
    let status: OrderStatus | undefined;
    let id = -1;
    for (let field = 0; field < fields.count; field++) {
      const key = fields.keys[field] as string;
      if (key === "status") {
        if (fields.kinds[field] !== KIND_STRING) return false;
        status = STATUS_TEXTS.get(fields.text(field));
        if (status === undefined) return false;
      } else if (!context.knownFields.has(key)) return false;
      else if (key === "id") id = field;
    }
    if (status === undefined || id === -1 || fields.kinds[id] !== KIND_NUMBER || !context.plan.valid(fields))
      return false;
    const { hi, lo } = halvesOfNumber(fields.numbers[id] as number);
    if (this.ids.add(hi, lo) < 0) return false;
    this.#indexes.push(index);
    this.sink.addFlat(fields, context.orderFields, status);
    return true;
  }

  add(entry: unknown, index: number): void {
    const seed = readOrder(entry, index, this.#context);
    if (!seed) return;
    const { hi, lo } = halvesOfBigint(seed.record.id);
    const place = this.ids.add(hi, lo);
    if (place < 0) {
      const earlier = this.#indexes[-place - 1];
      report(this.#context, entry, index, "id", `duplicate id, already used by orders[${earlier}]`);
      return;
    }
    this.#indexes.push(index);
    if (this.sink) this.sink.add(seed);
    else this.orders.push(seed);
  }
}

function checkApiKeys(apiKeys: unknown, problems: string[]): void {
  if (apiKeys === undefined) return;
  if (!Array.isArray(apiKeys) || apiKeys.some((key) => typeof key !== "string" || !isToken68(key))) {
    problems.push(`field "apiKeys": must be an array of keys of ${TOKEN68_RULE}`);
  }
}

interface OrderContext {
  orderFields: readonly string[];
  knownFields: ReadonlySet<string>;
  validate: ValidateFunction;
  plan: FlatRecordPlan | undefined;
  problems: string[];
}

const STATUS_TEXTS = new Map<string, OrderStatus>(ORDER_STATUSES.map((status) => [status, status]));

function report(context: OrderContext, entry: unknown, index: number, field: string, message: string): void {
  context.problems.push(`${describeOrder(entry, index)}, field "${field}": ${message}`);
}

// Runs once per order of fixtures that can hold 100k of them: no closures, no copies of valid orders.
function readOrder(entry: unknown, index: number, context: OrderContext): SeedOrder | undefined {
  if (!isPlainObject(entry)) {
    context.problems.push(`${describeOrder(entry, index)}: must be an object`);
    return undefined;
  }
  const before = context.problems.length;
  for (const field of Object.keys(entry)) {
    if (!context.knownFields.has(field)) {
      report(
        context,
        entry,
        index,
        field,
        `unknown field (an order has ${[...context.knownFields].join(", ")})`,
      );
    }
  }
  const status = entry.status;
  if (!ORDER_STATUSES.includes(status as OrderStatus)) {
    const problem = status === undefined ? "is required" : `unknown status ${describeValue(status)}`;
    report(context, entry, index, "status", `${problem}; one of ${ORDER_STATUSES.join(", ")}`);
  }
  if (entry.id === undefined) report(context, entry, index, "id", "is required");

  // The Order schema allows fields it does not list, so `status` passes through it untouched.
  if (!validateExact(context.validate, entry)) {
    for (const error of context.validate.errors ?? []) {
      const field = error.instancePath.split("/")[1] ?? "";
      report(
        context,
        entry,
        index,
        field,
        `${error.message ?? "is invalid"} (got ${describeValue(entry[field])})`,
      );
    }
  }
  const record: Record<string, unknown> = {};
  for (const field of context.orderFields) {
    const value = entry[field];
    if (value === undefined) continue;
    const stored = storedValue(value);
    if ("problem" in stored) report(context, entry, index, field, stored.problem);
    else record[field] = stored.value;
  }
  if (context.problems.length > before) return undefined;
  return { record: record as StoredOrderRecord, status: status as OrderStatus };
}

function describeOrder(entry: unknown, index: number): string {
  const id = isPlainObject(entry) ? entry.id : undefined;
  return `orders[${index}] (${id === undefined ? "no id" : `id ${describeValue(id)}`})`;
}

function describeValue(value: unknown): string {
  if (isJsonNumber(value)) return numberText(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  // Large and fractional numbers are parsed as LosslessNumber instances: objects, but not JSON objects.
  return value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype;
}

function positionHint(text: string, error: unknown): string {
  const match = /position (\d+)/.exec((error as Error).message ?? "");
  if (!match) return "";
  const before = text.slice(0, Number(match[1]));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return ` (line ${line}, column ${column})`;
}
