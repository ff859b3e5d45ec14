import { isJsonNumber, numberText, stringifyExact } from "../contract/exact-json.ts";
import type { Exchange } from "./http-client.ts";
import { isRecord, orderIdOf } from "./response-checks.ts";

/** One reading of the list: each order's exact JSON by id, or why there is none. */
export interface ListSnapshot {
  exchange: Exchange;
  orders?: Map<string, string>;
  /** The list as parsed, repeated ids and all (`orders` keeps one per id). */
  listed?: readonly unknown[];
  problem?: string;
}

export function snapshotOf(exchange: Exchange, status: number | undefined, body: unknown): ListSnapshot {
  if (status !== 200) return { exchange, problem: exchange.error ?? `status ${status}` };
  if (!Array.isArray(body)) return { exchange, problem: "the body is not a JSON array" };
  const orders = new Map<string, string>();
  for (const order of body) {
    const id = orderIdOf(order);
    if (id !== undefined) orders.set(id, recordText(order));
  }
  return { exchange, orders, listed: body };
}

/**
 * An order's JSON with its fields in sorted order, numbers digit for digit: field order is not meaning, and
 * a server may write the same record's fields in another order next time. Written field by field, since
 * the validating proxy does this for every order of every list that changed.
 */
function recordText(order: unknown): string {
  if (!isRecord(order)) return stringifyExact(order);
  const keys = Object.keys(order).sort();
  let text = "{";
  for (const [index, key] of keys.entries()) {
    const value = order[key];
    const written = isJsonNumber(value)
      ? numberText(value)
      : typeof value === "string"
        ? JSON.stringify(value)
        : value === null || typeof value === "boolean"
          ? String(value)
          : stringifyExact(value);
    text += `${index === 0 ? "" : ","}${JSON.stringify(key)}:${written}`;
  }
  return `${text}}`;
}
