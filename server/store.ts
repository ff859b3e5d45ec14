import type { ExactOrder } from "../contract/types.ts";
import { type CancelOutcome, cancelTransition, type OrderStatus } from "./order-status.ts";

export type StoredOrderRecord = ExactOrder & { id: bigint };

export interface SeedOrder {
  record: StoredOrderRecord;
  status: OrderStatus;
}

interface StoredOrder {
  readonly record: StoredOrderRecord;
  /** The Order record's JSON never changes (the status is not part of it), so it is written once. */
  readonly json: string;
  status: OrderStatus;
}

/** One isolated world of orders. Many can live side by side; nothing is shared between them. */
export interface Store {
  /** The listOrders body: every order in seed order, as a JSON array of Order records. */
  listBody(): Buffer;
  cancel(id: bigint): CancelOutcome;
  statusOf(id: bigint): OrderStatus | undefined;
  readonly size: number;
}

export function createStore(seed: readonly SeedOrder[]): Store {
  const orders: StoredOrder[] = seed.map(({ record, status }) => ({
    record,
    status,
    json: serializeRecord(record),
  }));
  // Keyed by the id's canonical digits: string keys hash faster than bigint ones.
  const byId = new Map<string, StoredOrder>();
  for (const order of orders) {
    const key = order.record.id.toString();
    if (byId.has(key)) throw new Error(`duplicate order id ${key}`);
    byId.set(key, order);
  }

  let cachedList: Buffer | undefined;
  const stateChanged = () => {
    cachedList = undefined;
  };

  return {
    get size() {
      return orders.length;
    },
    listBody() {
      cachedList ??= Buffer.from(`[${orders.map((order) => order.json).join(",")}]`);
      return cachedList;
    },
    cancel(id) {
      const order = byId.get(id.toString());
      if (!order) return "not_found";
      const { outcome, next } = cancelTransition(order.status);
      if (next !== order.status) {
        order.status = next;
        stateChanged();
      }
      return outcome;
    },
    statusOf(id) {
      return byId.get(id.toString())?.status;
    },
  };
}

/** A flat record of bigint, string and boolean fields as JSON, integers digit for digit, in key order. */
function serializeRecord(record: StoredOrderRecord): string {
  let json = "";
  for (const key in record) {
    const value = record[key as keyof StoredOrderRecord];
    if (value === undefined) continue;
    json += `${json === "" ? "{" : ","}"${key}":${typeof value === "string" ? JSON.stringify(value) : String(value)}`;
  }
  return json === "" ? "{}" : `${json}}`;
}
