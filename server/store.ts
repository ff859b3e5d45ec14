import { stringifyExact } from "../contract/exact-json.ts";
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
    json: stringifyExact(record),
  }));
  const byId = new Map<bigint, StoredOrder>();
  for (const order of orders) {
    if (byId.has(order.record.id)) throw new Error(`duplicate order id ${order.record.id}`);
    byId.set(order.record.id, order);
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
      const order = byId.get(id);
      if (!order) return "not_found";
      const { outcome, next } = cancelTransition(order.status);
      if (next !== order.status) {
        order.status = next;
        stateChanged();
      }
      return outcome;
    },
    statusOf(id) {
      return byId.get(id)?.status;
    },
  };
}
