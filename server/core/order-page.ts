import type { StoredOrder } from "./order-record.ts";
import type { OrderStatus } from "./order-status.ts";

/** Orders per page at most, and by default: a page the dashboard and a test can take in one go. */
export const MAX_PAGE_ORDERS = 1_000;
/**
 * Places in the list one request looks at, at most: a filter that matches little ends its page early with
 * a cursor to go on from, instead of holding the event loop while it walks a world of millions.
 */
export const MAX_PAGE_SCAN = 100_000;

/** Which orders of a world's list a control request asks for. */
export interface OrdersQuery {
  /** The place in the list to start from: 0, or a page's `next`. */
  cursor: number;
  limit: number;
  status?: OrderStatus;
}

/** One page of a world's orders, in list order. */
export interface OrdersPage {
  orders: StoredOrder[];
  /** The cursor of the next page; absent when the list ends here. */
  next?: number;
  /** Orders in the world. */
  total: number;
}

/**
 * A world's list read as places: `length` of them, each an order or, for a seed order the world removed,
 * nothing. `statusAt` answers without making the order, so that a status filter skips cheaply.
 */
export interface OrderPlaces {
  readonly length: number;
  readonly total: number;
  orderAt(place: number): StoredOrder | undefined;
  statusAt(place: number): OrderStatus | undefined;
}

/** The page a query asks for: matching orders from its cursor on, bounded in orders and in places looked at. */
export function pageOf(places: OrderPlaces, query: OrdersQuery): OrdersPage {
  const orders: StoredOrder[] = [];
  const end = Math.min(places.length, query.cursor + MAX_PAGE_SCAN);
  let place = query.cursor;
  for (; place < end && orders.length < query.limit; place++) {
    if (query.status !== undefined && places.statusAt(place) !== query.status) continue;
    const order = places.orderAt(place);
    if (order) orders.push(order);
  }
  return place < places.length
    ? { orders, next: place, total: places.total }
    : { orders, total: places.total };
}

/**
 * The page a query asks for, from orders read in list order one at a time (a shared store's world, read
 * back as a sequence): none is kept but the page's, so memory stays that of one page whatever the world.
 */
export function pageOfSequence(orders: Iterable<StoredOrder>, query: OrdersQuery): OrdersPage {
  const page: StoredOrder[] = [];
  const scanEnd = query.cursor + MAX_PAGE_SCAN;
  let place = 0;
  let next: number | undefined;
  for (const order of orders) {
    if (next === undefined && place >= query.cursor) {
      if (page.length === query.limit || place >= scanEnd) next = place;
      else if (query.status === undefined || order.status === query.status) page.push(order);
    }
    place++;
  }
  return next === undefined ? { orders: page, total: place } : { orders: page, next, total: place };
}
