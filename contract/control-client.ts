import { isJsonNumber, numberText, parseExact } from "./exact-json.ts";
import type { Behaviour, ControlOrder, ErrorRecord, JournalEntry, SessionSummary } from "./types.ts";

/** An order with its status; int64 fields as strings of digits, exact beyond 2^53. */
export type ClientOrder = Omit<ControlOrder, "id" | "petId"> & { id: string; petId?: string };
/** An order to create or replace; ids as digits, bigint or (up to 2^53) number. */
export type OrderInput = Omit<ControlOrder, "id" | "petId" | "status"> & {
  id?: OrderId;
  petId?: OrderId;
  status: OrderStatus;
};
export type OrderId = string | bigint | number;
/** An order's internal status, as control.openapi.yaml names them. */
export type OrderStatus = ControlOrder["status"];

export interface ControlClientOptions {
  /** Works on this session's world (`X-Mock-Session`); without it, on the default world. */
  session?: string;
  /** The control token, when the mock was started with `--control-token`. */
  token?: string;
  fetch?: typeof fetch;
  /**
   * Sends the control requests instead of `fetch`: for a caller with a client of its own (undici's
   * dispatcher, say) that makes many of them and need not pay for WHATWG's Request and Response objects.
   */
  transport?: ControlTransport;
}

/** One control request, as a transport is given it. */
export interface ControlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** A control answer, as a transport gives it back: its status, body text and header lookup. */
export interface ControlAnswer {
  status: number;
  text: string;
  headers: { get(name: string): string | null };
}

export type ControlTransport = (request: ControlRequest) => Promise<ControlAnswer>;

/** A control request the mock refused: its status and Error record. */
export class ControlError extends Error {
  override name = "ControlError";
  constructor(
    readonly status: number,
    readonly record: ErrorRecord | undefined,
    text: string,
  ) {
    super(record ? `${status} ${record.code}: ${record.message}` : `${status}: ${text.slice(0, 200)}`);
  }
}

/** Orders and ids one `POST /__control/orders` takes at most, of each: `batch` sends more in several. */
export const MAX_BATCH_ORDERS = 100;

/** What `batch` does: orders created where no order has their id, then ids removed. */
export interface OrderBatch {
  create?: readonly (OrderInput & { id: OrderId })[];
  remove?: readonly OrderId[];
}

/** The ids (digits) of the orders a batch created and removed, in the order given. */
export interface OrderBatchResult {
  created: string[];
  removed: string[];
}

/** Which orders `ordersPage` asks for (the control API's GET /orders query). */
export interface OrdersQuery {
  /** The id the page follows: a page's `next`; the list's start when absent. */
  after?: OrderId;
  /** At most this many orders (1 to 1,000; default 1,000). */
  limit?: number;
  status?: OrderStatus;
}

export interface OrdersPage {
  orders: ClientOrder[];
  /** The id (its digits) to ask for the next page `after`; absent on the last one. */
  next?: string;
  /** Orders in the world. */
  total: number;
}

/** Which sessions `sessionsPage` asks for (the control API's GET /sessions query). */
export interface SessionsQuery {
  /** The name the page follows, in name order: a page's `next`; the first name when absent. */
  after?: string;
  /** At most this many sessions (1 to 1,000; default 1,000). */
  limit?: number;
}

export interface SessionsPage {
  sessions: SessionSummary[];
  /** The name to ask for the next page `after`; absent on the last one. */
  next?: string;
  /** Live sessions in all. */
  total: number;
}

export interface ControlClient {
  /** Every order of the world, read page by page (a world may hold millions: `ordersPage` reads one). */
  orders(): Promise<ClientOrder[]>;
  /** One page of the world's orders, in list order, optionally of one status. */
  ordersPage(query?: OrdersQuery): Promise<OrdersPage>;
  /** The order with this id, or undefined. */
  order(id: OrderId): Promise<ClientOrder | undefined>;
  setStatus(id: OrderId, status: OrderStatus): Promise<ClientOrder>;
  /** Creates the order (appended to the list) or replaces it whole. */
  putOrder(order: OrderInput & { id: OrderId }): Promise<ClientOrder>;
  removeOrder(id: OrderId): Promise<void>;
  /**
   * Creates orders whose ids no order has (an order that has one is left as it is) and removes orders, in
   * requests of at most MAX_BATCH_ORDERS of each rather than one request per order.
   */
  batch(batch: OrderBatch): Promise<OrderBatchResult>;
  reset(): Promise<void>;
  /** The world's rules; with an argument, replaces them first. */
  behaviour(next?: Behaviour): Promise<Behaviour>;
  requests(): Promise<JournalEntry[]>;
  clearRequests(): Promise<void>;
  /** Every live session in name order, read page by page. */
  sessions(): Promise<SessionSummary[]>;
  /** One page of the live sessions, in name order. */
  sessionsPage(query?: SessionsQuery): Promise<SessionsPage>;
}

/** The control API's address, from the mock's address with or without `/v1` or `/__control`. */
export function controlRoot(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "").replace(/\/(v1|__control)$/, "")}/__control`;
}

/** The headers every control request carries: the session's name and the control token. */
export function controlHeaders(
  options: Pick<ControlClientOptions, "session" | "token">,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.session !== undefined) headers["x-mock-session"] = options.session;
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  return headers;
}

/**
 * A typed client of the mock's control API for test code. `baseUrl` is the mock's address, with or
 * without `/v1` or `/__control`.
 */
export function createControlClient(baseUrl: string, options: ControlClientOptions = {}): ControlClient {
  const root = controlRoot(baseUrl);
  const send = options.transport ?? fetchTransport(options.fetch ?? fetch);
  const headers = controlHeaders(options);

  const answer = async (method: string, path: string, body?: string) => {
    const got = await send({
      method,
      url: `${root}${path}`,
      headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
      ...(body === undefined ? {} : { body }),
    });
    if (got.status < 200 || got.status > 299)
      throw new ControlError(got.status, errorRecordIn(got.text), got.text);
    return { text: got.text, headers: got.headers };
  };
  const call = async (method: string, path: string, body?: string) => (await answer(method, path, body)).text;
  const orderPath = (id: OrderId) => `/orders/${digits(id)}`;
  const ordersPage = async (query: OrdersQuery = {}): Promise<OrdersPage> => {
    const params = new URLSearchParams();
    if (query.after !== undefined) params.set("after", digits(query.after));
    if (query.limit !== undefined) params.set("limit", String(query.limit));
    if (query.status !== undefined) params.set("status", query.status);
    const { text, headers: got } = await answer("GET", `/orders${params.size > 0 ? `?${params}` : ""}`);
    const next = got.get("x-next-cursor");
    return {
      orders: (parseExact(text) as unknown[]).map(toClientOrder),
      ...(next !== null ? { next } : {}),
      total: Number(got.get("x-total-count") ?? 0),
    };
  };

  const batchOnce = async (create: OrderBatch["create"], remove: OrderBatch["remove"]) => {
    const body = `{"create":[${(create ?? []).map(orderJson).join(",")}],"remove":[${(remove ?? []).map(digits).join(",")}]}`;
    const answer = parseExact(await call("POST", "/orders", body)) as Record<
      "created" | "removed",
      unknown[]
    >;
    const ids = (values: unknown[]) => values.map((id) => numberText(id as never));
    return { created: ids(answer.created), removed: ids(answer.removed) };
  };

  const sessionsPage = async (query: SessionsQuery = {}): Promise<SessionsPage> => {
    const params = new URLSearchParams();
    if (query.after !== undefined) params.set("after", query.after);
    if (query.limit !== undefined) params.set("limit", String(query.limit));
    const { text, headers: got } = await answer("GET", `/sessions${params.size > 0 ? `?${params}` : ""}`);
    const next = got.get("x-next-cursor");
    return {
      sessions: JSON.parse(text) as SessionSummary[],
      ...(next !== null ? { next } : {}),
      total: Number(got.get("x-total-count") ?? 0),
    };
  };

  return {
    orders: async () => {
      const all: ClientOrder[] = [];
      let page: OrdersPage = await ordersPage();
      all.push(...page.orders);
      while (page.next !== undefined) {
        page = await ordersPage({ after: page.next });
        all.push(...page.orders);
      }
      return all;
    },
    ordersPage,
    order: async (id) =>
      (parseExact(await call("GET", `/orders?id=${digits(id)}`)) as unknown[]).map(toClientOrder)[0],
    setStatus: async (id, status) =>
      toClientOrder(parseExact(await call("PUT", orderPath(id), JSON.stringify({ status })))),
    putOrder: async (order) =>
      toClientOrder(parseExact(await call("PUT", orderPath(order.id), orderJson(order)))),
    removeOrder: async (id) => {
      await call("DELETE", orderPath(id));
    },
    batch: async ({ create = [], remove = [] }) => {
      if (create.length <= MAX_BATCH_ORDERS && remove.length <= MAX_BATCH_ORDERS)
        return batchOnce(create, remove);
      // Every creation before any removal, as one request does them.
      const result: OrderBatchResult = { created: [], removed: [] };
      for (let from = 0; from < create.length; from += MAX_BATCH_ORDERS)
        result.created.push(...(await batchOnce(create.slice(from, from + MAX_BATCH_ORDERS), [])).created);
      for (let from = 0; from < remove.length; from += MAX_BATCH_ORDERS)
        result.removed.push(...(await batchOnce([], remove.slice(from, from + MAX_BATCH_ORDERS))).removed);
      return result;
    },
    reset: async () => {
      await call("POST", "/reset");
    },
    behaviour: async (next) =>
      JSON.parse(
        await (next === undefined
          ? call("GET", "/behaviour")
          : call("PUT", "/behaviour", JSON.stringify(next))),
      ) as Behaviour,
    requests: async () => JSON.parse(await call("GET", "/requests")) as JournalEntry[],
    clearRequests: async () => {
      await call("DELETE", "/requests");
    },
    sessions: async () => {
      const all: SessionSummary[] = [];
      let page: SessionsPage = await sessionsPage();
      all.push(...page.sessions);
      while (page.next !== undefined) {
        page = await sessionsPage({ after: page.next });
        all.push(...page.sessions);
      }
      return all;
    },
    sessionsPage,
  };
}

function toClientOrder(value: unknown): ClientOrder {
  const order = { ...(value as Record<string, unknown>) };
  for (const [field, member] of Object.entries(order)) {
    if (isJsonNumber(member))
      order[field] = field === "quantity" ? Number(numberText(member)) : numberText(member);
  }
  return order as unknown as ClientOrder;
}

/** JSON with the ids written as bare digits, whatever type they were given in. */
function orderJson(order: OrderInput): string {
  const parts = Object.entries(order)
    .filter(([, value]) => value !== undefined)
    .map(([field, value]) => {
      const text = field === "id" || field === "petId" ? digits(value as OrderId) : JSON.stringify(value);
      return `${JSON.stringify(field)}:${text}`;
    });
  return `{${parts.join(",")}}`;
}

/**
 * Control requests sent with `fetch`. A request that reaches nothing says which address it tried and why
 * (fetch's own "fetch failed" names neither); its `cause` stays the socket's error.
 */
export function fetchTransport(send: typeof fetch): ControlTransport {
  return async ({ method, url, headers, body }) => {
    let response: Response;
    try {
      response = await send(url, { method, headers, ...(body === undefined ? {} : { body }) });
    } catch (error) {
      throw unreached(error, method, url);
    }
    return { status: response.status, text: await response.text(), headers: response.headers };
  };
}

/** What a control request that got no answer throws: a TypeError as fetch's, naming the URL and the cause. */
function unreached(error: unknown, method: string, url: string): unknown {
  if (!(error instanceof TypeError)) return error;
  type Failure = { code?: string; message?: string; errors?: Failure[] };
  const cause = error.cause as Failure | undefined;
  const code = cause?.code ?? cause?.errors?.find((each) => each.code !== undefined)?.code ?? cause?.message;
  const shown = new URL(url);
  shown.username = "";
  shown.password = "";
  return new TypeError(
    `cannot reach the mock's control API: ${method} ${shown.href} failed (${code ?? error.message}); is the mock running at that address?`,
    { cause: error.cause ?? error },
  );
}

/** An id as the digits that go on the wire; anything else would not be an int64. */
function digits(id: OrderId): string {
  const text = String(id);
  if (!/^-?\d+$/.test(text))
    throw new TypeError(`an order id is an integer, written in digits (got ${text})`);
  return text;
}

function errorRecordIn(text: string): ErrorRecord | undefined {
  try {
    const record = JSON.parse(text) as Partial<ErrorRecord>;
    return typeof record.code === "string" && typeof record.message === "string"
      ? (record as ErrorRecord)
      : undefined;
  } catch {
    return undefined;
  }
}
