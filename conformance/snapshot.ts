import { stringifyExact } from "../contract/exact-json.ts";
import type { Exchange } from "./http-client.ts";
import { orderIdOf } from "./response-checks.ts";

/** One reading of the list: each order's exact JSON by id, or why there is none. */
export interface ListSnapshot {
  exchange: Exchange;
  orders?: Map<string, string>;
  problem?: string;
}

export function snapshotOf(exchange: Exchange, status: number | undefined, body: unknown): ListSnapshot {
  if (status !== 200) return { exchange, problem: exchange.error ?? `status ${status}` };
  if (!Array.isArray(body)) return { exchange, problem: "the body is not a JSON array" };
  const orders = new Map<string, string>();
  for (const order of body) {
    const id = orderIdOf(order);
    if (id !== undefined) orders.set(id, stringifyExact(sortKeys(order)));
  }
  return { exchange, orders };
}

// Field order is not meaning: a server may write the same record's fields in another order next time.
function sortKeys(order: unknown): unknown {
  if (order === null || typeof order !== "object" || Array.isArray(order)) return order;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(order).sort()) {
    Object.defineProperty(sorted, key, { value: (order as Record<string, unknown>)[key], enumerable: true });
  }
  return sorted;
}
