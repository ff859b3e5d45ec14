import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { readOperations } from "../../contract/operations.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { assertListedError, bundledFixture, contract, controlContract, DEV_KEY } from "./support.ts";

// Seeded and bounded like the API's fuzz test; FUZZ_SEED and FUZZ_RUNS change them.
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Math.ceil(Number(process.env.FUZZ_RUNS ?? 3000) / 3);

const SESSIONS = ["s1", "s2", "team.a_b-9"];
const ORDER_IDS = [
  ...[...bundledFixture.seed.all()].map((order) => order.key),
  "424242",
  "9223372036854775806",
];
const STATUSES = ["pending", "shipped", "cancelled"] as const;
const FORCIBLE: Record<string, number[]> = {};
for (const operation of readOperations(contract).values()) {
  FORCIBLE[operation.operationId] = [...operation.responses.keys(), 500, 502, 503, 504];
}
// Statuses control.openapi.yaml documents per path and method, plus the 404/405 of routing.
const CONTROL_STATUSES = new Map<string, number[]>();
for (const [path, item] of Object.entries(controlContract.document.paths)) {
  for (const [method, operation] of Object.entries(item)) {
    if (method === "parameters") continue;
    CONTROL_STATUSES.set(`${method.toUpperCase()} ${path}`, Object.keys(operation.responses).map(Number));
  }
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The session the request works on, when its header is one of the pool's valid names. */
  session: string | undefined;
  sessionHeader: "none" | "valid" | "invalid";
}

const sessionHeader = fc.oneof(
  fc.constant({ kind: "none" as const }),
  fc.constantFrom(...SESSIONS).map((name) => ({ kind: "valid" as const, name })),
  fc
    .oneof(fc.constantFrom("", " ", "a b", "x".repeat(65), "ü", "a/b", "..;"), fc.string({ maxLength: 70 }))
    // Clients trim header values, so a name is judged as it arrives.
    .filter((name) => !/^[A-Za-z0-9._-]{1,64}$/.test(name.trim()) && /^[\x20-\x7e]*$/.test(name))
    .map((name) => ({ kind: "invalid" as const, name })),
);
const prefer = fc.option(
  fc.oneof(
    fc.constantFrom(200, 204, 401, 404, 409, 500, 502, 503, 504, 418, 302, 100).map((code) => `code=${code}`),
    fc.constantFrom(
      "code=abc",
      "code=",
      "delay=70000",
      "delay=-1",
      "delay=x",
      "return=minimal",
      'code="503"',
    ),
    fc.integer({ min: 0, max: 15 }).map((ms) => `delay=${ms}`),
    fc.string({ maxLength: 30 }).filter((text) => /^[\x20-\x7e]*$/.test(text)),
  ),
  { nil: undefined },
);
const orderBody = fc.oneof(
  fc.constantFrom(...STATUSES).map((status) => JSON.stringify({ status })),
  fc
    .record({
      petId: fc.nat(),
      quantity: fc.nat(100),
      complete: fc.boolean(),
      status: fc.constantFrom(...STATUSES),
    })
    .map((order) => JSON.stringify(order)),
  fc.constantFrom(
    '{"status":"lost"}',
    '{"shipDate":"soon","status":"pending"}',
    "[]",
    "{",
    '{"colour":1}',
    "",
  ),
  fc.json(),
);
const batchBody = fc.oneof(
  fc
    .record({
      create: fc.array(
        fc.record({
          id: fc.constantFrom(...ORDER_IDS),
          petId: fc.nat(),
          status: fc.constantFrom(...STATUSES),
        }),
        { maxLength: 4 },
      ),
      remove: fc.array(fc.constantFrom(...ORDER_IDS), { maxLength: 4 }),
    })
    .map(
      ({ create, remove }) =>
        `{"create":[${create.map((order) => `{"id":${order.id},"petId":${order.petId},"status":"${order.status}"}`).join(",")}],"remove":[${remove.join(",")}]}`,
    ),
  fc.constantFrom(
    `{"remove":[${Array.from({ length: 101 }, (_, at) => at).join(",")}]}`,
    '{"create":[{"id":1}]}',
    '{"remove":["1"]}',
    '{"remove":[1e3]}',
    "[]",
    "{",
  ),
  fc.json(),
);
const behaviourBody = fc.oneof(
  fc
    .record({
      delayMs: fc.integer({ min: 0, max: 10 }),
      rules: fc.array(
        fc.record({
          operation: fc.constantFrom("listOrders", "cancelOrder"),
          // No 5xx here: a 5xx must always be one a request asked for with Prefer.
          status: fc.constantFrom(200, 204, 401, 404, 409, 418),
          times: fc.integer({ min: 1, max: 3 }),
        }),
        { maxLength: 3 },
      ),
    })
    .map((behaviour) => JSON.stringify(behaviour)),
  fc.json(),
);
const controlRequest = fc.oneof(
  fc.constant({ method: "GET", path: "/__control/orders" }),
  fc
    .tuple(fc.constantFrom("PUT", "DELETE", "PATCH"), fc.constantFrom(...ORDER_IDS, "abc", "-0"), orderBody)
    .map(([method, id, body]) => ({
      method,
      path: `/__control/orders/${id}`,
      ...(method === "PUT" ? { body } : {}),
    })),
  batchBody.map((body) => ({ method: "POST", path: "/__control/orders", body })),
  fc.constantFrom("POST", "GET").map((method) => ({ method, path: "/__control/reset" })),
  fc.constantFrom("GET", "DELETE").map((method) => ({ method, path: "/__control/requests" })),
  fc.tuple(fc.constantFrom("GET", "PUT"), behaviourBody).map(([method, body]) => ({
    method,
    path: "/__control/behaviour",
    ...(method === "PUT" ? { body } : {}),
  })),
  fc.constant({ method: "GET", path: "/__control/sessions" }),
  fc
    .constantFrom("/__control", "/__control/", "/__control/x", "/__control/orders/1/x")
    .map((path) => ({ method: "GET", path })),
);
const apiRequest = fc.oneof(
  fc.constant({ method: "GET", path: "/v1/store/orders" }),
  fc.constantFrom(...ORDER_IDS).map((id) => ({ method: "DELETE", path: `/v1/store/orders/${id}` })),
);
const fuzzRequest: fc.Arbitrary<Request> = fc
  .record({
    target: fc.oneof(controlRequest, apiRequest),
    session: sessionHeader,
    prefer,
    validKey: fc.boolean(),
  })
  .map(({ target, session, prefer, validKey }) => {
    const headers: Record<string, string> = { authorization: `Bearer ${validKey ? DEV_KEY : "wrong"}` };
    if (session.kind !== "none") headers["x-mock-session"] = session.name;
    if (prefer !== undefined) headers.prefer = prefer;
    if ("body" in target && target.body !== undefined) headers["content-type"] = "application/json";
    return {
      ...target,
      headers,
      session: session.kind === "valid" ? session.name : undefined,
      sessionHeader: session.kind,
    };
  });

/** Statuses a request may get: documented for its operation or control route, or the listed 400/404/405. */
function allowedStatuses(request: Request): number[] {
  if (request.sessionHeader === "invalid") return [400];
  if (request.path.startsWith("/v1/")) {
    const operation = request.method === "GET" ? "listOrders" : "cancelOrder";
    return [...(FORCIBLE[operation] ?? []), 400];
  }
  const route = request.path.replace(/^\/__control\/?/, "/").replace(/\/orders\/[^/]+$/, "/orders/{id}");
  const documented = CONTROL_STATUSES.get(`${request.method} ${route}`);
  return documented ?? [404, 405];
}

describe(`the control API, sessions and Prefer under random requests (fast-check, seed ${SEED}, ${RUNS} cases)`, () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());

  it("never answers 5xx unless asked to, answers documented statuses with Error records, and changes orders only through documented calls", async () => {
    const origin = new URL(mock.url).origin;
    const send = async (request: Request) => {
      const response = await fetch(`${origin}${request.path}`, {
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
      });
      return { status: response.status, headers: response.headers, text: await response.text() };
    };
    const ordersOf = async (session: string | undefined) => {
      const answer = await fetch(`${origin}/__control/orders`, {
        headers: session ? { "x-mock-session": session } : {},
      });
      return (await answer.text()).replace(/\s/g, "");
    };

    await fc.assert(
      fc.asyncProperty(fuzzRequest, async (request) => {
        const before = await ordersOf(request.session);
        const answer = await send(request);
        const asked5xx = /code="?5\d\d/.test(request.headers.prefer ?? "");
        assert.ok(answer.status < 500 || asked5xx, `5xx nobody asked for: ${answer.status} ${answer.text}`);
        assert.ok(
          allowedStatuses(request).includes(answer.status),
          `status ${answer.status} is not documented for ${request.method} ${request.path}: ${answer.text}`,
        );
        if (answer.status >= 400)
          assertListedError(answer.status, answer.headers.get("content-type"), answer.text);
        const after = await ordersOf(request.session);
        const changing =
          (request.method === "DELETE" && request.path.startsWith("/v1/") && answer.status === 204) ||
          (request.path.startsWith("/__control/orders") && [200, 201, 204].includes(answer.status)) ||
          (request.path === "/__control/reset" && answer.status === 204);
        if (!changing) assert.equal(after, before, "orders changed through a call that does not change them");
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});
