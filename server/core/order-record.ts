import { isJsonNumber, numberText } from "../../contract/exact-json.ts";
import type { ExactOrder } from "../../contract/types.ts";
import type { OrderStatus } from "./order-status.ts";

export type StoredOrderRecord = ExactOrder & { id: bigint };

/** An order as fixtures and the control API give it: the Order record and the status it never shows. */
export interface SeedOrder {
  record: StoredOrderRecord;
  status: OrderStatus;
}

/**
 * An order as a store keeps it: its id's digits, its JSON written once (the status is not part of it) and
 * its status. Nothing else: a world of a million orders keeps a million of these.
 */
export interface StoredOrder {
  readonly key: string;
  readonly json: string;
  readonly status: OrderStatus;
}

/** Orders are keyed by the id's canonical digits: string keys hash faster than bigint ones. */
export const orderKey = (id: bigint): string => id.toString();

export function storedOrder({ record, status }: SeedOrder): StoredOrder {
  return { key: orderKey(record.id), json: serializeRecord(record), status };
}

/** The control API's view of an order: the Order record's JSON with the status added. */
export function withStatusJson(order: StoredOrder): string {
  const status = `"status":"${order.status}"}`;
  return order.json === "{}" ? `{${status}` : `${order.json.slice(0, -1)},${status}`;
}

/** Orders with their statuses as the control API's JSON array, in the order given. */
export function withStatusListJson(orders: Iterable<StoredOrder>): string {
  let json = "";
  for (const order of orders) json += `${json === "" ? "[" : ","}${withStatusJson(order)}`;
  return json === "" ? "[]" : `${json}]`;
}

/** A flat record of bigint, string and boolean fields as JSON, integers digit for digit, in key order. */
export function serializeRecord(record: StoredOrderRecord): string {
  let json = "";
  for (const key in record) {
    const value = record[key as keyof StoredOrderRecord];
    if (value === undefined) continue;
    json += `${json === "" ? "{" : ","}"${key}":${typeof value === "string" ? JSON.stringify(value) : String(value)}`;
  }
  return json === "" ? "{}" : `${json}}`;
}

const PLAIN_INTEGER = /^-?\d+$/;

/**
 * A parsed field as a store keeps it: JSON numbers exact as bigint, anything else as it is. A number not
 * written as plain digits (`1e3`, `2.0`) is refused with the reason, since its digits would not round-trip.
 */
export function storedValue(value: unknown): { value: unknown } | { problem: string } {
  if (!isJsonNumber(value)) return { value };
  const literal = numberText(value);
  return PLAIN_INTEGER.test(literal)
    ? { value: BigInt(literal) }
    : { problem: `write integers as plain digits (got ${literal})` };
}
