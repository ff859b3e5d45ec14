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
  /** The id (its digits) of the order the page follows: a page's `next`; the list's start when absent. */
  after?: string;
  limit: number;
  status?: OrderStatus;
}

/** One page of a world's orders, in list order. */
export interface OrdersPage {
  orders: StoredOrder[];
  /** The id to ask for the next page after; absent when the list ends here. */
  next?: string;
  /** Orders in the world. */
  total: number;
}

/**
 * A world's list read as places: the seed's, then one per order the world ever added, in the order it was
 * added. A place holds an order, or nothing when its order was removed (or added again further on).
 * `statusAt` answers without making the order, so that a status filter skips cheaply.
 *
 * Every id the list ever held has a place (`placeOf`): where its order stands now, or stood last before it
 * was removed. Paging after an id is paging after that place, so orders removed meanwhile skip nothing.
 */
export interface OrderPlaces {
  readonly length: number;
  readonly total: number;
  orderAt(place: number): StoredOrder | undefined;
  statusAt(place: number): OrderStatus | undefined;
  /** The id's digits that place was made for. */
  keyAt(place: number): string;
  placeOf(key: string): number | undefined;
}

/**
 * The page a query asks for: matching orders after its id, bounded in orders and in places looked at.
 * Undefined when `after` names an id this world's list never held (or a reset forgot).
 */
export function pageOf(places: OrderPlaces, query: OrdersQuery): OrdersPage | undefined {
  const cursor = query.after === undefined ? -1 : places.placeOf(query.after);
  if (cursor === undefined) return undefined;
  const start = cursor + 1;
  const orders: StoredOrder[] = [];
  const end = Math.min(places.length, start + MAX_PAGE_SCAN);
  // A page that ends at the scan's bound ends on a place its own id leads back to, so that the cursor
  // given resumes right there (an id added again further on would jump ahead).
  const resumable = (place: number) => places.placeOf(places.keyAt(place)) === place;
  let place = start;
  for (; place < places.length && orders.length < query.limit; place++) {
    if (place >= end && resumable(place - 1)) break;
    if (query.status !== undefined && places.statusAt(place) !== query.status) continue;
    const order = places.orderAt(place);
    if (order) orders.push(order);
  }
  return place < places.length
    ? { orders, next: places.keyAt(place - 1), total: places.total }
    : { orders, total: places.total };
}
