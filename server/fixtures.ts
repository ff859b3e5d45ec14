import { readFileSync, statSync } from "node:fs";
import type { ErrorObject } from "ajv";
import { exactInteger, isLosslessNumber, parseExact, toSchemaView } from "../contract/exact-json.ts";
import type { Contract } from "../contract/openapi.ts";
import { ORDER_STATUSES, type OrderStatus } from "./order-status.ts";
import type { SeedOrder, StoredOrderRecord } from "./store.ts";

export interface Fixture {
  apiKeys: string[];
  orders: SeedOrder[];
}

/** A fixture file that cannot seed the mock; the message names the file, the order and the field. */
export class FixtureError extends Error {
  override name = "FixtureError";
}

// Generous for hand-written worlds and generated load fixtures alike, small enough to refuse junk early.
export const MAX_FIXTURE_BYTES = 256 * 1024 * 1024;
const MAX_PROBLEMS_SHOWN = 10;
const FIXTURE_KEYS = ["apiKeys", "orders"];

export function loadFixtureFile(path: string, contract: Contract): Fixture {
  let bytes: Buffer;
  try {
    const size = statSync(path).size;
    if (size > MAX_FIXTURE_BYTES) {
      throw new FixtureError(
        `${path}: the file is ${size} bytes; fixture files are limited to ${MAX_FIXTURE_BYTES}`,
      );
    }
    bytes = readFileSync(path);
  } catch (error) {
    if (error instanceof FixtureError) throw error;
    throw new FixtureError(
      `${path}: cannot read the fixture file (${(error as NodeJS.ErrnoException).code ?? error})`,
    );
  }
  return parseFixture(bytes, path, contract);
}

export function parseFixture(bytes: Uint8Array, source: string, contract: Contract): Fixture {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new FixtureError(`${source}: the file is not valid UTF-8 text`);
  }
  let document: unknown;
  try {
    document = parseExact(text);
  } catch (error) {
    const reason = error instanceof RangeError ? "nested too deeply" : (error as Error).message;
    throw new FixtureError(`${source}: not valid JSON: ${reason}${positionHint(text, error)}`);
  }

  const problems: string[] = [];
  const orders = readDocument(document, contract, problems);
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => `  - ${problem}`);
    if (problems.length > MAX_PROBLEMS_SHOWN)
      shown.push(`  - … and ${problems.length - MAX_PROBLEMS_SHOWN} more`);
    throw new FixtureError(`${source}: invalid fixture:\n${shown.join("\n")}`);
  }
  return { apiKeys: (document as { apiKeys?: string[] }).apiKeys ?? [], orders };
}

function readDocument(document: unknown, contract: Contract, problems: string[]): SeedOrder[] {
  if (!isPlainObject(document)) {
    problems.push('the top level must be an object with "apiKeys" and "orders"');
    return [];
  }
  for (const key of Object.keys(document)) {
    if (!FIXTURE_KEYS.includes(key))
      problems.push(`unknown top-level field "${key}" (expected ${FIXTURE_KEYS.join(", ")})`);
  }
  checkApiKeys(document.apiKeys, problems);
  if (!Array.isArray(document.orders)) {
    problems.push('field "orders": must be an array of orders');
    return [];
  }
  const orderFields = Object.keys(contract.document.components.schemas.Order?.properties ?? {});
  const validateOrder = contract.schema("Order");
  const seen = new Map<bigint, number>();
  const orders: SeedOrder[] = [];
  document.orders.forEach((entry: unknown, index: number) => {
    const seed = readOrder(entry, orderFields, validateOrder, (field, message) => {
      problems.push(`${describeOrder(entry, index)}, field "${field}": ${message}`);
    });
    if (!seed) {
      if (!isPlainObject(entry)) problems.push(`${describeOrder(entry, index)}: must be an object`);
      return;
    }
    const earlier = seen.get(seed.record.id);
    if (earlier !== undefined) {
      problems.push(
        `${describeOrder(entry, index)}, field "id": duplicate id, already used by orders[${earlier}]`,
      );
      return;
    }
    seen.set(seed.record.id, index);
    orders.push(seed);
  });
  return orders;
}

function checkApiKeys(apiKeys: unknown, problems: string[]): void {
  if (apiKeys === undefined) return;
  if (
    !Array.isArray(apiKeys) ||
    apiKeys.some((key) => typeof key !== "string" || key.trim() === "" || /\s/.test(key))
  ) {
    problems.push('field "apiKeys": must be an array of non-empty strings without white space');
  }
}

function readOrder(
  entry: unknown,
  orderFields: string[],
  validateOrder: (value: unknown) => boolean,
  report: (field: string, message: string) => void,
): SeedOrder | undefined {
  if (!isPlainObject(entry)) return undefined;
  let valid = true;
  const fail = (field: string, message: string) => {
    valid = false;
    report(field, message);
  };
  for (const field of Object.keys(entry)) {
    if (field !== "status" && !orderFields.includes(field)) {
      fail(field, `unknown field (an order has ${[...orderFields, "status"].join(", ")})`);
    }
  }
  if (!ORDER_STATUSES.includes(entry.status as OrderStatus)) {
    fail(
      "status",
      `${entry.status === undefined ? "is required" : `unknown status ${describeValue(entry.status)}`}; one of ${ORDER_STATUSES.join(", ")}`,
    );
  }
  if (entry.id === undefined) fail("id", "is required");

  const { status, ...publicFields } = entry;
  const validateFunction = validateOrder as ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };
  if (!validateFunction(toSchemaView(publicFields))) {
    for (const error of validateFunction.errors ?? []) {
      const field = error.instancePath.split("/")[1] ?? "";
      fail(field, `${error.message ?? "is invalid"} (got ${describeValue(publicFields[field])})`);
    }
  }
  const record: Record<string, unknown> = {};
  for (const field of orderFields) {
    const value = publicFields[field];
    if (value === undefined) continue;
    if (isLosslessNumber(value)) {
      const literal = (value as { value: string }).value;
      if (!/^-?\d+$/.test(literal) || exactInteger(literal) === null) {
        fail(field, `write integers as plain digits (got ${literal})`);
        continue;
      }
      record[field] = BigInt(literal);
    } else {
      record[field] = value;
    }
  }
  if (!valid) return undefined;
  return { record: record as StoredOrderRecord, status: status as OrderStatus };
}

function describeOrder(entry: unknown, index: number): string {
  const id = isPlainObject(entry) ? entry.id : undefined;
  return `orders[${index}] (${id === undefined ? "no id" : `id ${describeValue(id)}`})`;
}

function describeValue(value: unknown): string {
  if (isLosslessNumber(value)) return (value as { value: string }).value;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  // Parsed numbers are LosslessNumber instances: objects, but not JSON objects.
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
