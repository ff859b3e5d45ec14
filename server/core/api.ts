import type { OperationId } from "../../contract/types.ts";
import { JSON_CONTENT_TYPE } from "./errors.ts";
import { errorResponse, type MockRequest, type MockResponse, truncate, withHeader } from "./exchange.ts";
import { parseOrderId } from "./order-id.ts";
import type { CancelOutcome } from "./order-status.ts";
import { type Preferences, parsePrefer } from "./prefer.ts";
import { type SyncOrAsync, then } from "./sync-or-async.ts";
import type { Arrangement, World } from "./world.ts";

export const BASE_PATH = "/v1";
export const LIST_PATH = `${BASE_PATH}/store/orders`;
const ORDER_PATH_PREFIX = `${LIST_PATH}/`;
const AUTH_CHALLENGE = 'Bearer realm="petstore"';
const INVALID_TOKEN_CHALLENGE = `${AUTH_CHALLENGE}, error="invalid_token"`;
const NO_PREFERENCES: Preferences = {};

/** What the API's operations need besides the world and the request. */
export interface ApiContext {
  /** Whether `Prefer` is read (it is part of the control features). */
  readonly controlEnabled: boolean;
  /** Statuses an operation may be forced to answer: those openapi.yaml documents and outage drills. */
  forcible(operation: OperationId): readonly number[];
}

/**
 * Who a request is from: a caller whose key was accepted, with the world it plays in, or one whose key
 * was refused, for whom no world is looked up, created or changed (a stranger spends nothing).
 */
export type Caller = { readonly world: World } | { readonly refused: { readonly tokenGiven: boolean } };

/** Routing of /v1: the two operations, 405 for other methods on their paths, 404 elsewhere. */
export function handleApi(
  context: ApiContext,
  caller: Caller,
  request: MockRequest,
  path: string,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  const { method } = request;
  if (path === LIST_PATH) {
    if (method !== "GET" && method !== "HEAD") return methodNotAllowed(method, "GET, HEAD", cors);
    return operate(context, caller, "listOrders", request, cors, (world) => listResponse(world, cors));
  }
  if (path.startsWith(ORDER_PATH_PREFIX) && path.indexOf("/", ORDER_PATH_PREFIX.length) === -1) {
    if (method !== "DELETE") return methodNotAllowed(method, "DELETE", cors);
    const segment = path.slice(ORDER_PATH_PREFIX.length);
    let orderId: string;
    try {
      orderId = decodeURIComponent(segment);
    } catch {
      return errorResponse(
        "bad_request",
        "The request could not be read: the path is not valid percent-encoding.",
        cors,
      );
    }
    return operate(context, caller, "cancelOrder", request, cors, (world) => cancel(world, orderId, cors));
  }
  return errorResponse("not_found", `No resource at ${truncate(path)}.`, cors);
}

/** Authentication first, then a forced answer (Prefer, then the world's rules), else the operation itself. */
function operate(
  context: ApiContext,
  caller: Caller,
  operation: OperationId,
  request: MockRequest,
  cors: Readonly<Record<string, string>>,
  run: (world: World) => SyncOrAsync<MockResponse>,
): SyncOrAsync<MockResponse> {
  let preferences = NO_PREFERENCES;
  const prefer = context.controlEnabled ? request.headers.prefer : undefined;
  if (prefer !== undefined) {
    const parsed = parsePrefer(prefer);
    if (typeof parsed === "string") return errorResponse("invalid_prefer", `${parsed}.`, cors);
    const allowed = context.forcible(operation);
    if (parsed.code !== undefined && !allowed.includes(parsed.code)) {
      return errorResponse(
        "invalid_prefer",
        `Prefer: code=${parsed.code} is not an answer of ${operation}; it can be forced to ${allowed.join(", ")}.`,
        cors,
      );
    }
    preferences = parsed;
  }
  // A refused key is answered at once: no world's rules, delay or journal are spent on it.
  if ("refused" in caller) return unauthorized(cors, caller.refused.tokenGiven);
  const { world } = caller;
  // A Prefer code takes no use from the rules: it answers before any rule would.
  const arranged = world.arrange(preferences.code === undefined ? operation : undefined);
  if (arranged instanceof Promise) {
    return arranged.then((settled) =>
      delayed(answer(world, cors, preferences, settled, run), preferences, settled),
    );
  }
  return delayed(answer(world, cors, preferences, arranged, run), preferences, arranged);
}

function delayed(
  response: SyncOrAsync<MockResponse>,
  preferences: Preferences,
  arranged: Arrangement,
): SyncOrAsync<MockResponse> {
  const delayMs = preferences.delayMs ?? arranged.delayMs;
  if (delayMs === 0) return response;
  return then(response, (settled) => {
    settled.delayMs = delayMs;
    return settled;
  });
}

function answer(
  world: World,
  cors: Readonly<Record<string, string>>,
  preferences: Preferences,
  { rule }: Arrangement,
  run: (world: World) => SyncOrAsync<MockResponse>,
): SyncOrAsync<MockResponse> {
  if (preferences.code !== undefined) {
    return forced(world, preferences.code, cors, `Prefer: code=${preferences.code}`);
  }
  if (!rule) return run(world);
  if (rule.fault === "close") return { status: 0, headers: {}, fault: "close" };
  if (rule.fault === "truncate") {
    return then(listResponse(world, cors), (response) => ({ ...response, fault: "truncate" as const }));
  }
  return forced(world, rule.status as number, cors, "a behaviour rule");
}

/** A forced answer: the status with a valid body for it, and no change to the world. */
function forced(
  world: World,
  status: number,
  cors: Readonly<Record<string, string>>,
  cause: string,
): SyncOrAsync<MockResponse> {
  const because = `Forced by ${cause}; nothing was changed.`;
  switch (status) {
    case 200:
      return listResponse(world, cors);
    case 204:
      return { status: 204, headers: cors };
    case 401:
      return errorResponse("unauthorized", because, withHeader(cors, "www-authenticate", AUTH_CHALLENGE));
    case 404:
      return errorResponse("order_not_found", because, cors);
    case 409:
      return errorResponse("order_not_cancellable", because, cors);
    default:
      return errorResponse("simulated_failure", `Simulated failure: ${because}`, cors, status);
  }
}

function listResponse(world: World, cors: Readonly<Record<string, string>>): SyncOrAsync<MockResponse> {
  const headers = withHeader(cors, "content-type", JSON_CONTENT_TYPE);
  const body = world.listBody();
  if (body instanceof Promise) return body.then((settled) => ({ status: 200, headers, body: settled }));
  return { status: 200, headers, body };
}

function cancel(
  world: World,
  orderId: string,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  const id = parseOrderId(orderId);
  if (id === null) return cancelResponse("not_found", id, orderId, cors);
  const outcome = world.cancel(id);
  if (outcome instanceof Promise)
    return outcome.then((settled) => cancelResponse(settled, id, orderId, cors));
  return cancelResponse(outcome, id, orderId, cors);
}

function cancelResponse(
  outcome: CancelOutcome,
  id: bigint | null,
  orderId: string,
  cors: Readonly<Record<string, string>>,
): MockResponse {
  switch (outcome) {
    case "cancelled":
      return { status: 204, headers: cors };
    case "not_cancellable":
      return errorResponse(
        "order_not_cancellable",
        `Order ${id} cannot be cancelled: only pending orders can be.`,
        cors,
      );
    case "not_found":
      return errorResponse("order_not_found", `No order with id ${truncate(orderId)}.`, cors);
  }
}

export function unauthorized(cors: Readonly<Record<string, string>>, tokenGiven: boolean): MockResponse {
  return errorResponse(
    "unauthorized",
    tokenGiven
      ? "The API key is not valid."
      : "An API key is required: send Authorization: Bearer <API_KEY>.",
    withHeader(cors, "www-authenticate", tokenGiven ? INVALID_TOKEN_CHALLENGE : AUTH_CHALLENGE),
  );
}

export function methodNotAllowed(
  method: string,
  allow: string,
  cors: Readonly<Record<string, string>>,
): MockResponse {
  return errorResponse(
    "method_not_allowed",
    `${method} is not allowed here; allowed: ${allow}.`,
    withHeader(cors, "allow", allow),
  );
}
