import type { Contract } from "../../contract/contract.ts";
import { readOperations } from "../../contract/operations.ts";
import type { OperationId } from "../../contract/types.ts";
import { type ApiContext, handleApi } from "./api.ts";
import { createAuthenticator } from "./auth.ts";
import { SIMULATED_FAILURE_STATUSES } from "./behaviour.ts";
import { type Asset, CONTROL_PATH, type ControlContext, handleControl } from "./control.ts";
import { createCorsPolicy } from "./cors.ts";
import { errorResponse, type MockRequest, type MockResponse, pathOf } from "./exchange.ts";
import type { Seed } from "./seed.ts";
import { createSessions, SESSION_HEADER, SESSION_NAME, type Sessions } from "./sessions.ts";
import { createWorld, type World } from "./world.ts";

export const DEFAULT_MAX_SESSIONS = 1_000;
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
export const DEFAULT_JOURNAL_SIZE = 1_000;

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
    /** The dashboard's files, served under /__control/. */
    assets?: ReadonlyMap<string, Asset>;
  };
  /** Origins allowed to call the mock from a browser; `"*"` (the default) allows any. */
  corsOrigins?: readonly string[] | "*";
  maxSessions?: number;
  sessionIdleMs?: number;
  /** Requests kept in each world's journal. */
  journalSize?: number;
  /** Milliseconds since the epoch; tests move it to age sessions. */
  clock?: () => number;
}

/**
 * The mock's rules in one place, with no transport in them: routing of the API and the control API,
 * authentication, the cancel rule, Error records, sessions, Prefer and behaviour rules. Every transport
 * (the Node server, in-process adapters) hands requests to `handle` and writes what it returns.
 */
export interface MockCore {
  handle(request: MockRequest): MockResponse;
  /** New fixtures: the default world moves to them, sessions keep theirs, new sessions start from them. */
  reload(seed: Seed, apiKeys: readonly string[]): void;
  readonly defaultWorld: World;
  readonly sessions: Sessions;
  readonly controlEnabled: boolean;
}

export function createMockCore(options: MockCoreOptions): MockCore {
  let seed = options.seed;
  let authenticate = createAuthenticator(options.apiKeys);
  const clock = options.clock ?? Date.now;
  const journalSize = options.journalSize ?? DEFAULT_JOURNAL_SIZE;
  const cors = createCorsPolicy(options.corsOrigins ?? "*");
  const steerable = options.control !== undefined;

  const documented = new Map<string, number[]>();
  for (const operation of readOperations(options.contract).values()) {
    documented.set(operation.operationId, [...operation.responses.keys(), ...SIMULATED_FAILURE_STATUSES]);
  }
  const forcible = (operation: OperationId) => documented.get(operation) ?? [];

  const api: ApiContext = {
    steerable,
    forcible,
  };

  const defaultWorld = createWorld(null, seed, journalSize, clock());
  const sessions = createSessions(
    {
      maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
      idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
    },
    (name, now) => createWorld(name, seed, journalSize, now),
  );
  const control: ControlContext | undefined = options.control && {
    ...(options.control.token !== undefined
      ? { authenticate: createAuthenticator([options.control.token]) }
      : {}),
    ...(options.control.assets ? { assets: options.control.assets } : {}),
    validateOrderInput: options.control.contract.schema("ControlOrderInput"),
    validateBehaviour: options.control.contract.schema("Behaviour"),
    forcible,
    seed: () => seed,
    sessions,
    now: clock,
  };

  return {
    defaultWorld,
    sessions,
    controlEnabled: steerable,
    reload(next, apiKeys) {
      seed = next;
      authenticate = createAuthenticator(apiKeys);
      defaultWorld.store.reset(next);
    },
    handle(request) {
      const { headers } = request;
      // Preflights need no key and no world: a browser sends them on its own before the real request.
      if (request.method === "OPTIONS")
        return { status: 204, headers: cors.preflightHeaders(headers.origin) };
      const corsHeaders = cors.headersFor(headers.origin);
      const sentPath = pathOf(request.url);
      const path = sentPath.length > 1 && sentPath.endsWith("/") ? sentPath.slice(0, -1) : sentPath;

      let world = defaultWorld;
      const session = steerable ? headers[SESSION_HEADER] : undefined;
      if (session !== undefined) {
        if (!SESSION_NAME.test(session)) {
          return errorResponse(
            "invalid_session",
            "X-Mock-Session must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'.",
            corsHeaders,
          );
        }
        world = sessions.use(session, clock());
      }
      if (control && (path === CONTROL_PATH || path.startsWith(`${CONTROL_PATH}/`))) {
        return handleControl(control, world, request, path, corsHeaders);
      }

      const started = performance.now();
      const auth = authenticate(headers.authorization);
      const response = handleApi(api, world, request, path, corsHeaders, auth);
      world.journal.record({
        time: clock(),
        method: request.method,
        path: sentPath,
        status: response.fault === "close" ? null : response.status,
        durationMs: Math.round((performance.now() - started + (response.delayMs ?? 0)) * 1000) / 1000,
        session: world.session,
        keyValid: auth.ok,
        ...(response.fault ? { fault: response.fault } : {}),
      });
      return response;
    },
  };
}
