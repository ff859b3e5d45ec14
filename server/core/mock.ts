import type { AllowedHosts } from "../../common/allowed-hosts.ts";
import type { Contract } from "../../contract/contract.ts";
import { readOperations } from "../../contract/operations.ts";
import type { OperationId } from "../../contract/types.ts";
import { type ApiContext, handleApi, methodNotAllowed } from "./api.ts";
import { createAuthenticator } from "./auth.ts";
import { SIMULATED_FAILURE_STATUSES } from "./behaviour.ts";
import { type Asset, CONTROL_PATH, type ControlContext, controlGate, handleControl } from "./control.ts";
import { createCorsPolicy } from "./cors.ts";
import {
  errorResponse,
  jsonResponse,
  type MockRequest,
  type MockResponse,
  pathOf,
  withHeader,
} from "./exchange.ts";
import { journalPath } from "./journal.ts";
import { createMemoryState } from "./memory-state.ts";
import type { Seed } from "./seed.ts";
import { SESSION_HEADER, SESSION_NAME } from "./sessions.ts";
import { type SyncOrAsync, then } from "./sync-or-async.ts";
import type { StateStore, World } from "./world.ts";

export const DEFAULT_MAX_SESSIONS = 1_000;
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
export const DEFAULT_JOURNAL_SIZE = 1_000;
/** Answers 200 while the mock and its state store can serve: for load balancers, with no key and no data. */
export const HEALTH_PATH = "/__health";

export interface MockCoreOptions {
  seed: Seed;
  apiKeys: readonly string[];
  /** openapi.yaml: which statuses each operation documents. */
  contract: Contract;
  /** The control API with sessions, Prefer and behaviour rules; off when absent. */
  control?: {
    /** control.openapi.yaml, whose schemas validate control requests. */
    contract: Contract;
    /** When given, every control request needs `Authorization: Bearer <token>`. */
    token?: string;
    /**
     * The Host names it answers (see common/allowed-hosts.ts); every name when absent, as in process, where
     * no other machine and no DNS name reaches it.
     */
    hosts?: AllowedHosts;
    /** The dashboard's files, served under /__control/. */
    assets?: ReadonlyMap<string, Asset>;
  };
  /** Origins allowed to call the mock from a browser; `"*"` (the default) allows any. */
  corsOrigins?: readonly string[] | "*";
  maxSessions?: number;
  sessionIdleMs?: number;
  /** What sessions kept in memory may hold together beyond the shared seed; past it the least recent go. */
  maxSessionBytes?: number;
  /** Requests kept in each world's journal. */
  journalSize?: number;
  /** Milliseconds since the epoch; tests move it to age sessions. */
  clock?: () => number;
  /**
   * Where worlds live, opened over the same seed; by default this process's memory, made from the session
   * and journal options above. A shared store (Redis) makes the answers promises; the rules are the same.
   */
  state?: StateStore;
}

/**
 * The mock's rules in one place, with no transport in them: routing of the API and the control API,
 * authentication, the cancel rule, Error records, sessions, Prefer and behaviour rules. Every transport
 * (the Node server, in-process adapters) hands requests to `handle` and writes what it returns.
 */
export interface MockCore {
  /** At once on the in-memory state; a promise on a shared store. */
  handle(request: MockRequest): SyncOrAsync<MockResponse>;
  /** New fixtures: the default world moves to them, sessions keep theirs, new sessions start from them. */
  reload(seed: Seed, apiKeys: readonly string[]): SyncOrAsync<void>;
  readonly state: StateStore;
  readonly controlEnabled: boolean;
}

export function createMockCore(options: MockCoreOptions): MockCore {
  let authenticate = createAuthenticator(options.apiKeys);
  // Requests refused for their key or control token since start: counted, never stored.
  let refusedRequests = 0;
  const clock = options.clock ?? Date.now;
  const journalSize = options.journalSize ?? DEFAULT_JOURNAL_SIZE;
  const cors = createCorsPolicy(options.corsOrigins ?? "*");
  const controlEnabled = options.control !== undefined;

  const documented = new Map<string, number[]>();
  for (const operation of readOperations(options.contract).values()) {
    documented.set(operation.operationId, [...operation.responses.keys(), ...SIMULATED_FAILURE_STATUSES]);
  }
  const forcible = (operation: OperationId) => documented.get(operation) ?? [];

  const api: ApiContext = {
    controlEnabled,
    forcible,
  };

  const state =
    options.state ??
    createMemoryState(
      options.seed,
      {
        maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
        idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
        ...(options.maxSessionBytes !== undefined ? { maxBytes: options.maxSessionBytes } : {}),
      },
      journalSize,
      clock(),
    );
  const { defaultWorld } = state;
  const control = controlContextOf(options, state, forcible, () => refusedRequests, clock);

  const inWorld = (
    session: string | undefined,
    corsHeaders: Readonly<Record<string, string>>,
    use: (world: World) => SyncOrAsync<MockResponse>,
  ): SyncOrAsync<MockResponse> => {
    if (session === undefined) return served(state, use(defaultWorld), corsHeaders);
    const world = state.session(session, clock());
    return served(state, world instanceof Promise ? world.then(use) : use(world), corsHeaders);
  };

  const handleApiInWorld = (
    world: World,
    request: MockRequest,
    path: string,
    sentPath: string,
    corsHeaders: Readonly<Record<string, string>>,
  ): SyncOrAsync<MockResponse> => {
    const started = performance.now();
    const response = handleApi(api, { world }, request, path, corsHeaders);
    if (response instanceof Promise) {
      return response.then((settled) => recordExchange(world, request, sentPath, started, settled, clock));
    }
    return recordExchange(world, request, sentPath, started, response, clock);
  };

  return {
    state,
    controlEnabled,
    reload(next, apiKeys) {
      authenticate = createAuthenticator(apiKeys);
      return state.reload(next);
    },
    handle(request) {
      const { headers } = request;
      const sentPath = pathOf(request.url);
      const path = sentPath.length > 1 && sentPath.endsWith("/") ? sentPath.slice(0, -1) : sentPath;
      const controlling =
        control !== undefined && (path === CONTROL_PATH || path.startsWith(`${CONTROL_PATH}/`));
      // Preflights need no key and no world: a browser sends them on its own before the real request.
      if (request.method === "OPTIONS")
        return {
          status: 204,
          headers: controlling
            ? cors.controlPreflightHeaders(headers.origin)
            : cors.preflightHeaders(headers.origin),
        };
      const corsHeaders = controlling
        ? cors.controlHeadersFor(headers.origin)
        : cors.headersFor(headers.origin);
      if (controlling) {
        const refused = controlRefusal(headers, options.control?.hosts, cors.controlAllows);
        if (refused) return errorResponse(refused.code, refused.message, corsHeaders);
      }

      if (path === HEALTH_PATH) return served(state, health(state, request.method, corsHeaders), corsHeaders);

      const session = controlEnabled ? headers[SESSION_HEADER] : undefined;
      if (session !== undefined && !SESSION_NAME.test(session)) {
        return errorResponse(
          "invalid_session",
          "X-Mock-Session must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'.",
          corsHeaders,
        );
      }
      // Keys and tokens are checked before a session is looked up, so a stranger never creates, touches or
      // evicts one, and nothing of a refused request is kept but its count.
      if (controlling && control) {
        const gated = controlGate(control, request, path, corsHeaders);
        if (gated?.refused) refusedRequests++;
        if (gated) return gated.response;
        return inWorld(session, corsHeaders, (world) =>
          handleControl(control, world, request, path, corsHeaders),
        );
      }
      const auth = authenticate(headers.authorization);
      if (!auth.ok) {
        refusedRequests++;
        return handleApi(api, { refused: auth }, request, path, corsHeaders);
      }
      return inWorld(session, corsHeaders, (world) =>
        handleApiInWorld(world, request, path, sentPath, corsHeaders),
      );
    },
  };
}

function controlContextOf(
  options: MockCoreOptions,
  state: StateStore,
  forcible: (operation: OperationId) => number[],
  refusedRequests: () => number,
  clock: () => number,
): ControlContext | undefined {
  return (
    options.control && {
      ...(options.control.token !== undefined
        ? { authenticate: createAuthenticator([options.control.token]) }
        : {}),
      ...(options.control.assets ? { assets: options.control.assets } : {}),
      validateOrderInput: options.control.contract.schema("ControlOrderInput"),
      validateOrderBatch: options.control.contract.schema("ControlOrderBatch"),
      validateBehaviour: options.control.contract.schema("Behaviour"),
      forcible,
      sessions: (now, query) => state.sessions(now, query),
      refusedRequests,
      now: clock,
    }
  );
}

/** A store that fails answers 503 for the request it failed, and the mock goes on. */
function served(
  state: StateStore,
  response: SyncOrAsync<MockResponse>,
  corsHeaders: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  return response instanceof Promise
    ? response.catch((error) => storeFailure(state.unreachable(error), corsHeaders))
    : response;
}

/** The journal's entry for an exchange with a world. */
function recordExchange(
  world: World,
  request: MockRequest,
  sentPath: string,
  started: number,
  response: MockResponse,
  clock: () => number,
): MockResponse {
  world.record({
    time: clock(),
    method: request.method,
    path: journalPath(sentPath),
    status: response.fault === "close" ? null : response.status,
    durationMs: Math.round((performance.now() - started + (response.delayMs ?? 0)) * 1000) / 1000,
    session: world.session,
    // Only accepted keys reach a world; the field stays for readers of the journal's earlier form.
    keyValid: true,
    ...(response.fault ? { fault: response.fault } : {}),
  });
  return response;
}

const HEALTHY_BODY = JSON.stringify({ status: "ok" });

function health(
  state: StateStore,
  method: string,
  cors: Readonly<Record<string, string>>,
): SyncOrAsync<MockResponse> {
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed(method, "GET, HEAD", cors);
  return then(state.healthy(), (healthy) =>
    healthy ? jsonResponse(200, HEALTHY_BODY, cors) : storeFailure(true, cors),
  );
}

/** A shared store that cannot be reached is a 503 the client may retry; anything else is the mock's fault. */
function storeFailure(unreachable: boolean, cors: Readonly<Record<string, string>>): MockResponse {
  if (unreachable) {
    return errorResponse(
      "store_unavailable",
      "The mock's state store cannot be reached; try again shortly.",
      withHeader(cors, "retry-after", "1"),
    );
  }
  return errorResponse("internal_error", "Unexpected error.", cors);
}

/**
 * Why a control request is refused, if it is: a Host name the mock does not answer to (a page reaching it
 * by DNS rebinding), or a browser page of another origin that --cors-origin does not name (a cross-origin
 * form or fetch, which browsers send without asking when it is "simple"). Tools send no Origin; the
 * dashboard is of the mock's own origin.
 */
function controlRefusal(
  headers: MockRequest["headers"],
  hosts: AllowedHosts | undefined,
  corsAllows: (origin: string) => boolean,
): { code: "foreign_host" | "foreign_origin"; message: string } | undefined {
  if (hosts && !hosts.allows(headers.host))
    return {
      code: "foreign_host",
      message: `The control API answers only requests addressed to this mock (Host: ${hosts.described}).`,
    };
  const { origin } = headers;
  const crossSite = headers["sec-fetch-site"] === "cross-site";
  if (origin === undefined) {
    return crossSite
      ? { code: "foreign_origin", message: "The control API does not answer pages of other sites." }
      : undefined;
  }
  if (corsAllows(origin) || sameOrigin(origin, headers.host)) return undefined;
  return {
    code: "foreign_origin",
    message: "The control API answers only the mock's own pages and origins named with --cors-origin.",
  };
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}
