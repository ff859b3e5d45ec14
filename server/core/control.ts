import type { ErrorObject, ValidateFunction } from "ajv";
import { parseExact, toSchemaView } from "../../contract/exact-json.ts";
import { validateExact } from "../../contract/exact-validate.ts";
import type { Behaviour, OperationId } from "../../contract/types.ts";
import { methodNotAllowed } from "./api.ts";
import type { AuthResult } from "./auth.ts";
import { behaviourJson, ruleProblem } from "./behaviour.ts";
import {
  errorResponse,
  jsonResponse,
  type MockRequest,
  type MockResponse,
  truncate,
  withHeader,
} from "./exchange.ts";
import { journalJson } from "./journal.ts";
import { parseOrderId } from "./order-id.ts";
import { MAX_PAGE_ORDERS, type OrdersQuery } from "./order-page.ts";
import {
  orderKey,
  type SeedOrder,
  type StoredOrderRecord,
  storedValue,
  withStatusListJson,
} from "./order-record.ts";
import { ORDER_STATUSES, type OrderStatus } from "./order-status.ts";
import { SESSION_NAME } from "./sessions.ts";
import { type SyncOrAsync, then } from "./sync-or-async.ts";
import {
  MAX_PAGE_SESSIONS,
  type SessionSummary,
  type SessionsPage,
  type SessionsQuery,
  type World,
} from "./world.ts";

export const CONTROL_PATH = "/__control";
/** On the journal's answer: how many requests were refused for their key or token, which it never holds. */
export const REFUSED_HEADER = "x-mock-refused-requests";
const CONTROL_CHALLENGE = 'Bearer realm="petstore-control"';
const ORDER_FIELDS = ["id", "petId", "quantity", "shipDate", "complete"] as const;

/** A file of the dashboard page, served by the mock itself. */
export interface Asset {
  contentType: string;
  body: Uint8Array | string;
}

// The page may load only its own files and talk only to its own origin.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'; form-action 'self'";

export interface ControlContext {
  /** The dashboard's files by path under /__control ("/" for the page); none when absent. */
  assets?: ReadonlyMap<string, Asset>;
  /** Checks the control token; undefined when none is required (loopback). */
  authenticate?: (header: string | undefined) => AuthResult;
  validateOrderInput: ValidateFunction;
  validateOrderBatch: ValidateFunction;
  validateBehaviour: ValidateFunction;
  forcible(operation: OperationId): readonly number[];
  sessions(now: number, query: SessionsQuery): SyncOrAsync<SessionsPage>;
  /** Requests refused for their key or token since start, which no journal holds. */
  refusedRequests(): number;
  now(): number;
}

/**
 * What the control API answers before any world is looked up: the dashboard's files, which hold no data,
 * and the refusal of a missing or wrong control token. Undefined when the request goes on to a world.
 */
export function controlGate(
  context: ControlContext,
  request: MockRequest,
  path: string,
  cors: Readonly<Record<string, string>>,
): { response: MockResponse; refused: boolean } | undefined {
  const route = path.slice(CONTROL_PATH.length);
  const { method } = request;
  // The page and its files hold no data, so a browser can load them before it has the token to ask for.
  const asset = context.assets?.get(route === "" ? "/" : route);
  // A file is there for reading only: another method is told so, and which ones, rather than a 404.
  if (asset && method !== "GET" && method !== "HEAD")
    return { refused: false, response: methodNotAllowed(method, "GET, HEAD", cors) };
  if (asset) {
    return {
      refused: false,
      response: {
        status: 200,
        headers: {
          "content-type": asset.contentType,
          "content-security-policy": CONTENT_SECURITY_POLICY,
          "x-content-type-options": "nosniff",
          "referrer-policy": "no-referrer",
          "cache-control": "no-cache",
        },
        body: asset.body,
      },
    };
  }
  const auth = context.authenticate?.(request.headers.authorization);
  if (auth === undefined || auth.ok) return undefined;
  return {
    refused: true,
    response: errorResponse(
      "unauthorized",
      auth.tokenGiven
        ? "The control token is not valid."
        : "The control API needs the control token: send Authorization: Bearer <TOKEN>.",
      withHeader(cors, "www-authenticate", CONTROL_CHALLENGE),
    ),
  };
}

/**
 * The control API under /__control, for a request `controlGate` let through: one world's orders, journal
 * and rules, and the session list.
 */
export function handleControl(
  context: ControlContext,
  world: World,
  request: MockRequest,
  path: string,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  const route = path.slice(CONTROL_PATH.length);
  const { method } = request;
  const only = (allowed: string, run: () => SyncOrAsync<MockResponse>) =>
    allowed.split(", ").includes(method) ? run() : methodNotAllowed(method, allowed, cors);
  const noContent = (): MockResponse => ({ status: 204, headers: cors });

  const json = (text: SyncOrAsync<string>) => then(text, (body) => jsonResponse(200, body, cors));

  switch (route) {
    case "/orders":
      return only("GET, POST", () =>
        method === "POST" ? orderBatch(context, world, request, cors) : ordersPage(world, request, cors),
      );
    case "/reset":
      return only("POST", () => then(world.reset(), noContent));
    case "/requests":
      return only("GET, DELETE", () =>
        method === "DELETE"
          ? then(world.clearJournal(), noContent)
          : then(world.journal(), (entries) =>
              jsonResponse(
                200,
                journalJson(entries),
                withHeader(cors, REFUSED_HEADER, String(context.refusedRequests())),
              ),
            ),
      );
    case "/behaviour":
      return only("GET, PUT", () =>
        method === "PUT"
          ? putBehaviour(context, world, request, cors)
          : json(then(world.behaviour(), behaviourJson)),
      );
    case "/sessions":
      return only("GET", () => sessionsPage(context, request, cors));
  }
  if (route.startsWith("/orders/") && route.indexOf("/", "/orders/".length) === -1) {
    return only("PUT, DELETE", () =>
      orderRoute(context, world, request, route.slice("/orders/".length), cors),
    );
  }
  return errorResponse("not_found", `No resource at ${truncate(path)}.`, cors);
}

/**
 * GET /orders: a page of the world's orders in list order (`after` an id, `limit`), filtered by `status`, or
 * the one order with an `id`. The answer is the page's JSON array; `X-Total-Count` counts the world's orders,
 * and `X-Next-Cursor` (the id to page after) and a `Link: rel="next"` say where the next page starts.
 */
function ordersPage(
  world: World,
  request: MockRequest,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  const query = readOrdersQuery(request.url);
  if (typeof query === "string") return invalid(query, cors);
  if ("id" in query) {
    return then(world.controlOrderJson(query.id), (found) =>
      jsonResponse(200, found === undefined ? "[]" : `[${found}]`, cors),
    );
  }
  return then(world.page(query), (page) => {
    if (page === undefined) {
      return invalid(
        `query parameter "after": no order with id ${query.after} is in this world's list, nor was removed from it lately (start again without "after")`,
        cors,
      );
    }
    const next = new URLSearchParams({ limit: String(query.limit) });
    if (query.status !== undefined) next.set("status", query.status);
    return jsonResponse(200, withStatusListJson(page.orders), pageHeaders(cors, "/orders", page, next));
  });
}

/**
 * The headers of a page: `X-Total-Count`, and unless it is the last, `X-Next-Cursor` (what to page after)
 * and a `Link: rel="next"` to the next page with the same query.
 */
function pageHeaders(
  cors: Readonly<Record<string, string>>,
  route: string,
  page: { total: number; next?: string },
  query: URLSearchParams,
): Readonly<Record<string, string>> {
  const headers = withHeader(cors, "x-total-count", String(page.total));
  if (page.next === undefined) return headers;
  const next = new URLSearchParams({ after: page.next, ...Object.fromEntries(query) });
  return withHeader(
    withHeader(headers, "x-next-cursor", page.next),
    "link",
    `<${CONTROL_PATH}${route}?${next}>; rel="next"`,
  );
}

/** GET /sessions: a page of the live sessions in name order (`after` a name, `limit`), headed as an orders page. */
function sessionsPage(
  context: ControlContext,
  request: MockRequest,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  const query = readSessionsQuery(request.url);
  if (typeof query === "string") return invalid(query, cors);
  return then(context.sessions(context.now(), query), (page) =>
    jsonResponse(
      200,
      sessionsJson(page.sessions),
      pageHeaders(cors, "/sessions", page, new URLSearchParams({ limit: String(query.limit) })),
    ),
  );
}

function readSessionsQuery(url: string): SessionsQuery | string {
  const at = url.indexOf("?");
  const params = new URLSearchParams(at === -1 ? "" : url.slice(at + 1));
  for (const name of params.keys()) {
    if (name !== "after" && name !== "limit")
      return `query parameter "${truncate(name)}": unknown (after, limit)`;
  }
  const after = params.get("after");
  if (after !== null && !SESSION_NAME.test(after))
    return `query parameter "after": must be a session name, 1 to 64 of A-Z a-z 0-9 . _ - (got "${truncate(after)}")`;
  const limit = wholeParameter(params, "limit", MAX_PAGE_SESSIONS);
  if (typeof limit === "string") return limit;
  return { ...(after !== null ? { after } : {}), limit };
}

/** A whole number from 1 to `max` (`max` when absent), or what is wrong with it. */
function wholeParameter(params: URLSearchParams, name: string, max: number): number | string {
  const text = params.get(name);
  if (text === null) return max;
  const value = Number(text);
  return /^\d{1,16}$/.test(text) && value >= 1 && value <= max
    ? value
    : `query parameter "${name}": must be a whole number from 1 to ${max} (got "${truncate(text)}")`;
}

function readOrdersQuery(url: string): OrdersQuery | { id: bigint } | string {
  const at = url.indexOf("?");
  const params = new URLSearchParams(at === -1 ? "" : url.slice(at + 1));
  for (const name of params.keys()) {
    if (name === "cursor")
      return 'query parameter "cursor": replaced by "after", the X-Next-Cursor (an order id) of the page before';
    if (!["after", "limit", "status", "id"].includes(name))
      return `query parameter "${truncate(name)}": unknown (after, limit, status, id)`;
  }
  const id = params.get("id");
  if (id !== null) {
    const parsed = parseOrderId(id);
    return parsed === null
      ? `query parameter "id": must be an int64 integer (got "${truncate(id)}")`
      : { id: parsed };
  }
  const whole = (name: string, fallback: number, min: number, max: number): number | string => {
    const text = params.get(name);
    if (text === null) return fallback;
    const value = Number(text);
    return /^\d{1,16}$/.test(text) && value >= min && value <= max
      ? value
      : `query parameter "${name}": must be a whole number from ${min} to ${max} (got "${truncate(text)}")`;
  };
  const afterText = params.get("after");
  const after = afterText === null ? undefined : parseOrderId(afterText);
  if (after === null)
    return `query parameter "after": must be an order id, an int64 integer (got "${truncate(afterText as string)}")`;
  const limit = whole("limit", MAX_PAGE_ORDERS, 1, MAX_PAGE_ORDERS);
  if (typeof limit === "string") return limit;
  const status = params.get("status");
  if (status !== null && !ORDER_STATUSES.includes(status as OrderStatus))
    return `query parameter "status": must be one of ${ORDER_STATUSES.join(", ")} (got "${truncate(status)}")`;
  return {
    ...(after !== undefined ? { after: orderKey(after) } : {}),
    limit,
    ...(status !== null ? { status: status as OrderStatus } : {}),
  };
}

function orderRoute(
  context: ControlContext,
  world: World,
  request: MockRequest,
  segment: string,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  let text: string;
  try {
    text = decodeURIComponent(segment);
  } catch {
    text = segment;
  }
  const id = parseOrderId(text);
  if (id === null)
    return invalid(`path parameter "id": must be an int64 integer (got "${truncate(text)}")`, cors);
  const notFound = () => errorResponse("order_not_found", `No order with id ${id} in this world.`, cors);
  if (request.method === "DELETE") {
    return then(world.removeOrder(id), (removed) => (removed ? { status: 204, headers: cors } : notFound()));
  }

  const body = readJsonBody(request, context.validateOrderInput);
  if (typeof body === "string") return invalid(body, cors);
  const fields = body as Record<string, unknown>;
  const status = fields.status as OrderStatus | undefined;
  if (Object.keys(fields).length === 1 && status !== undefined) {
    return then(world.setStatus(id, status), (found) =>
      found ? orderJson(world, id, 200, cors) : notFound(),
    );
  }
  if (status === undefined) return invalid('field "status": is required to create or replace an order', cors);
  const record = toRecord(fields);
  if (typeof record === "string") return invalid(record, cors);
  if (record.id !== undefined && record.id !== id) {
    return invalid(`field "id": must equal the path's id ${id} (got ${record.id})`, cors);
  }
  // The id comes first, as in fixtures, and is always there: the path names the order.
  return then(world.putOrder({ record: { id, ...record } as StoredOrderRecord, status }), (outcome) =>
    outcome === "full" ? worldFull("", cors) : orderJson(world, id, outcome === "created" ? 201 : 200, cors),
  );
}

/**
 * POST /orders: the orders of `create` made where no order has their id (one that has it is left as it
 * is), then the ids of `remove` removed; at most 100 of each, the schema's bound. The answer names the
 * ids created and removed.
 */
function orderBatch(
  context: ControlContext,
  world: World,
  request: MockRequest,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  const body = readJsonBody(request, context.validateOrderBatch);
  if (typeof body === "string") return invalid(body, cors);
  const batch = body as { create?: Record<string, unknown>[]; remove?: unknown[] };
  const orders: SeedOrder[] = [];
  for (const [at, fields] of (batch.create ?? []).entries()) {
    const record = toRecord(fields, `create[${at}].`);
    if (typeof record === "string") return invalid(record, cors);
    orders.push({ record: record as StoredOrderRecord, status: fields.status as OrderStatus });
  }
  const ids: bigint[] = [];
  for (const [at, value] of (batch.remove ?? []).entries()) {
    const stored = storedValue(value);
    if ("problem" in stored) return invalid(`field "remove[${at}]": ${stored.problem}`, cors);
    ids.push(stored.value as bigint);
  }
  return then(world.applyBatch(orders, ids), (done) =>
    done === "full"
      ? worldFull(" Nothing of this batch was done: its orders would not all fit.", cors)
      : jsonResponse(
          200,
          `{"created":[${done.created.join(",")}],"removed":[${done.removed.join(",")}]}`,
          cors,
        ),
  );
}

/** A write refused because the world holds as much as --max-memory lets it: 409 `world_full`. */
function worldFull(more: string, cors: Readonly<Record<string, string>>): MockResponse {
  return errorResponse(
    "world_full",
    `This world of the mock holds as much as the mock's --max-memory lets it: remove orders or reset it to add more, or start the mock with a larger --max-memory.${more}`,
    cors,
  );
}

function orderJson(
  world: World,
  id: bigint,
  status: number,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  return then(world.controlOrderJson(id), (json) => jsonResponse(status, json as string, cors));
}

function putBehaviour(
  context: ControlContext,
  world: World,
  request: MockRequest,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  const body = readJsonBody(request, context.validateBehaviour);
  if (typeof body === "string") return invalid(body, cors);
  const behaviour = toSchemaView(body) as Behaviour;
  const problem = ruleProblem(behaviour, context.forcible);
  if (problem) return invalid(problem, cors);
  const next = { delayMs: behaviour.delayMs ?? 0, rules: behaviour.rules ?? [] };
  return then(world.setBehaviour(next), () => jsonResponse(200, behaviourJson(next), cors));
}

function sessionsJson(sessions: readonly SessionSummary[]): string {
  return JSON.stringify(
    sessions.map((session) => ({ ...session, lastUsed: new Date(session.lastUsed).toISOString() })),
  );
}

/** The body parsed exactly (ids above 2^53 intact) and valid against the schema, or what is wrong with it. */
function readJsonBody(request: MockRequest, validate: ValidateFunction): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(request.body ?? new Uint8Array());
  } catch {
    return "the body is not valid UTF-8 text";
  }
  if (text.trim() === "") return "a JSON body is required";
  let value: unknown;
  try {
    value = parseExact(text);
  } catch (error) {
    return `the body is not valid JSON: ${(error as Error).message}`;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return "the body must be a JSON object";
  if (!validateExact(validate, value)) return describeSchemaError(validate.errors?.[0]);
  return value;
}

function describeSchemaError(error: ErrorObject | undefined): string {
  if (!error) return "the body is not valid";
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join("")
    .replace(/^\./, "");
  const params = error.params as {
    additionalProperty?: string;
    missingProperty?: string;
    allowedValues?: unknown[];
  };
  if (params.additionalProperty !== undefined) {
    return `field "${path ? `${path}.` : ""}${params.additionalProperty}": unknown field`;
  }
  if (params.missingProperty !== undefined) {
    return `field "${path ? `${path}.` : ""}${params.missingProperty}": is required`;
  }
  const allowed = params.allowedValues ? ` (${params.allowedValues.join(", ")})` : "";
  return `field "${path || "body"}": ${error.message ?? "is not valid"}${allowed}`;
}

/** Order fields as a stored record: integers exact as bigint, written as plain digits. */
function toRecord(fields: Record<string, unknown>, within = ""): Partial<StoredOrderRecord> | string {
  const record: Record<string, unknown> = {};
  for (const field of ORDER_FIELDS) {
    const value = fields[field];
    if (value === undefined) continue;
    const stored = storedValue(value);
    if ("problem" in stored) return `field "${within}${field}": ${stored.problem}`;
    record[field] = stored.value;
  }
  return record as Partial<StoredOrderRecord>;
}

function invalid(problem: string, cors: Readonly<Record<string, string>>): MockResponse {
  return errorResponse("invalid_control_request", `Invalid control request: ${problem}.`, cors);
}
