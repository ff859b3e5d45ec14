import type { StoredOrder } from "../core/order-record.ts";
import type { OrderStatus } from "../core/order-status.ts";
import type { Seed } from "../core/seed.ts";

/** A world's hash as Redis keeps it (redis-scripts.ts), read back over this replica's seed. */
export interface Overlay {
  version: string;
  /** How many orders differ from the seed. */
  changes: number;
  /** How many orders the world has over a seed of this size, counted without listing them. */
  size(seedSize: number): number;
  /** Every order in list order: the seed's, as changed, then those added. */
  listed(seed: Seed): Generator<StoredOrder>;
}

export function readOverlay(fields: Record<string, string>): Overlay {
  const statuses = new Map<string, OrderStatus>();
  const records = new Map<string, string>();
  const removed = new Set<string>();
  const added: Array<[number, string]> = [];
  const touched = new Set<string>();
  for (const field in fields) {
    const value = fields[field] as string;
    const kind = field.slice(0, 2);
    const key = field.slice(2);
    if (kind === "s:") statuses.set(key, value as OrderStatus);
    else if (kind === "r:") records.set(key, value);
    else if (kind === "x:") removed.add(key);
    else if (kind === "a:") added.push([Number(value), key]);
    else continue;
    touched.add(key);
  }
  added.sort((a, b) => a[0] - b[0]);
  const addedKeys = new Set(added.map(([, key]) => key));
  return {
    version: fields.v ?? "0",
    changes: touched.size,
    size: (seedSize) => seedSize - removed.size + added.length,
    *listed(seed) {
      for (const order of seed.all()) {
        if (addedKeys.has(order.key) || removed.has(order.key)) continue;
        const json = records.get(order.key);
        const status = statuses.get(order.key);
        yield json === undefined && status === undefined
          ? order
          : fromJson(order.key, json ?? order.json, status ?? order.status);
      }
      for (const [, key] of added) {
        yield fromJson(key, records.get(key) ?? "{}", statuses.get(key) ?? "pending");
      }
    },
  };
}

// A stored order rebuilt from Redis: only its key, JSON and status are read from here on.
function fromJson(key: string, json: string, status: OrderStatus): StoredOrder {
  return { key, json, status };
}
