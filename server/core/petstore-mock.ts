import type { Contract } from "../../contract/contract.ts";
import { type ControlClient, createControlClient } from "../../contract/control-client.ts";
import { parseFixture } from "./fixture.ts";
import {
  DEFAULT_GENERATE_SEED,
  GENERATED_API_KEY,
  generateOrders,
  MAX_GENERATED_ORDERS,
} from "./generate.ts";
import { createMockCore, type MockCore, type MockCoreOptions } from "./mock.ts";
import { createSeed, type Seed, SeedBuilder } from "./seed.ts";
import { webHandler } from "./web.ts";

export interface PetstoreMockOptions {
  /**
   * A fixture file's content: its JSON text (ids above 2^53 survive), or the object it parses to. By default
   * the bundled fixtures (12 orders, API key `dev-key-123`), the same as `petstore-mock` serves.
   */
  fixtures?: string | object;
  /**
   * A generated world instead of fixtures: `orders` valid orders, the same for the same `seed` (default 1),
   * as `petstore-mock --generate N --seed S` serves; its key is `dev-key-123` unless `apiKeys` are given.
   */
  generate?: { orders: number; seed?: number };
  /** Accepted API keys; by default the fixture's `apiKeys`. */
  apiKeys?: readonly string[];
  /** Turn the control API, sessions and Prefer off (default on). */
  control?: boolean;
  corsOrigins?: MockCoreOptions["corsOrigins"];
  maxSessions?: number;
  sessionIdleMs?: number;
  journalSize?: number;
}

export interface PetstoreMock {
  /** Answers a Web Request as the mock server would answer it over HTTP. */
  handle(request: Request): Promise<Response>;
  /** The control API as functions, on the default world; `control.session(name)` for a session's. */
  control: ControlClient & { session(name: string): ControlClient };
  readonly core: MockCore;
}

function worldOf(
  options: PetstoreMockOptions,
  contract: Contract,
): { seed: Seed; apiKeys: readonly string[] } {
  const { fixtures, generate } = options;
  if (generate !== undefined) {
    if (fixtures !== undefined)
      throw new TypeError("createPetstoreMock takes fixtures or generate, not both");
    const { orders, seed = DEFAULT_GENERATE_SEED } = generate;
    if (!Number.isSafeInteger(orders) || orders < 0 || orders > MAX_GENERATED_ORDERS)
      throw new TypeError(`generate.orders must be a whole number from 0 to ${MAX_GENERATED_ORDERS}`);
    const builder = new SeedBuilder();
    for (const order of generateOrders(orders, seed)) builder.add(order);
    return { seed: builder.finish(), apiKeys: [GENERATED_API_KEY] };
  }
  if (fixtures === undefined) throw new TypeError("createPetstoreMockWith needs fixtures");
  const text = typeof fixtures === "string" ? fixtures : JSON.stringify(fixtures);
  const fixture = parseFixture(new TextEncoder().encode(text), "fixtures", contract);
  return { seed: createSeed(fixture.orders), apiKeys: fixture.apiKeys };
}

// Control calls go through `handle` like any request, so they follow the very same rules.
const IN_PROCESS_ORIGIN = "http://petstore-mock.in-process";

/** The in-process mock over contracts the caller provides: from files in Node, bundled in a browser. */
export function createPetstoreMockWith(
  options: PetstoreMockOptions,
  contracts: { contract: Contract; controlContract: Contract },
): PetstoreMock {
  const world = worldOf(options, contracts.contract);
  const apiKeys = options.apiKeys ?? world.apiKeys;
  if (apiKeys.length === 0)
    throw new TypeError("createPetstoreMock needs an API key: in the fixtures or apiKeys");
  const core = createMockCore({
    seed: world.seed,
    apiKeys,
    contract: contracts.contract,
    ...(options.control === false ? {} : { control: { contract: contracts.controlContract } }),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
    ...(options.sessionIdleMs !== undefined ? { sessionIdleMs: options.sessionIdleMs } : {}),
    ...(options.journalSize !== undefined ? { journalSize: options.journalSize } : {}),
  });
  const handle = webHandler(core);
  const inProcessFetch = ((input: RequestInfo | URL, init?: RequestInit) =>
    handle(new Request(input, init))) as typeof fetch;
  const controlOf = (session?: string) =>
    createControlClient(IN_PROCESS_ORIGIN, {
      fetch: inProcessFetch,
      ...(session !== undefined ? { session } : {}),
    });
  return { handle, core, control: Object.assign(controlOf(), { session: controlOf }) };
}
