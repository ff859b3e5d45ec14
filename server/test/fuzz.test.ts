import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { loadContract } from "../../contract/openapi.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { parseOrderId } from "../core/order-id.ts";
import { loadFixtureFile } from "../fixtures.ts";
import { BUNDLED_FIXTURES } from "../options.ts";
import { assertListedError, DEV_KEY } from "./support.ts";

// Seeded and bounded: the same cases every run unless FUZZ_SEED says otherwise; a failure prints the seed
// and the shrunk request, and FUZZ_SEED=<seed> replays it.
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);

const contract = loadContract();
const { seed: fixture } = await loadFixtureFile(BUNDLED_FIXTURES, contract);
const LIST = "/v1/store/orders";

interface FuzzRequest {
  method: string;
  path: string;
  /** What the request is, by construction: the generator knows, the server must agree. */
  target: { kind: "list" } | { kind: "cancel"; segment: string } | { kind: "other" };
  authorization: { header?: string; valid: boolean };
  contentType?: string;
  body?: string;
}

const knownIds = [...fixture.all()].map((order) => order.key);
const orderSegment = fc.oneof(
  fc.constantFrom(...knownIds),
  fc.constantFrom(
    "0",
    "-0",
    "-1",
    "00002",
    "+1",
    "1e3",
    "1.0",
    "2.5",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999",
    "9007199254740992",
    "9007199254740993",
    "%31",
    "%2B1",
    "%zz",
    "%",
    "%F0%9F%90%B6",
    "null",
    "undefined",
    "NaN",
    "0x10",
  ),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }).map(encodeURIComponent),
  fc.integer({ min: 1, max: 4000 }).map((length) => "7".repeat(length)),
);

const validAuthorization = fc.constantFrom(
  `Bearer ${DEV_KEY}`,
  `bearer ${DEV_KEY}`,
  `BEARER ${DEV_KEY}`,
  `Bearer   ${DEV_KEY}  `,
);
// Every byte a header value may carry (RFC 9110 field-vchar, obs-text and spaces), DEL excluded.
const headerCharacter = fc.integer({ min: 0x20, max: 0xff }).filter((code) => code !== 0x7f);
const latin1 = fc.string({ unit: headerCharacter.map((code) => String.fromCharCode(code)), maxLength: 40 });
const invalidAuthorization = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(
    "",
    "Bearer",
    "Bearer ",
    "Basic ZGV2LWtleS0xMjM=",
    `Token ${DEV_KEY}`,
    DEV_KEY,
    `Bearer ${DEV_KEY}x`,
    `Bearer ${DEV_KEY.toUpperCase()}`,
  ),
  latin1.filter((text) => !text.includes(DEV_KEY)),
  fc
    .tuple(fc.constantFrom("Bearer ", "bearer ", "Digest ", "Bearer\t"), latin1)
    .map(([scheme, token]) => scheme + token)
    .filter((text) => !text.includes(DEV_KEY)),
  fc.integer({ min: 100, max: 6000 }).map((length) => `Bearer ${"k".repeat(length)}`),
);
const authorization = fc.oneof(
  validAuthorization.map((header) => ({ header, valid: true })),
  invalidAuthorization.map((header) => (header === undefined ? { valid: false } : { header, valid: false })),
);
const method = fc.constantFrom(
  "GET",
  "GET",
  "DELETE",
  "DELETE",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "OPTIONS",
  "TRACE",
);
const body = fc.option(fc.oneof(fc.string({ maxLength: 200 }), fc.constant("x".repeat(20_000)), fc.json()), {
  nil: undefined,
});
const contentType = fc.option(
  fc.constantFrom(
    "application/json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json; charset=latin1",
    "*/*",
    "garbage",
  ),
  { nil: undefined },
);
const otherPath = fc.oneof(
  fc.constantFrom(
    "/",
    "/v1",
    "/v1/",
    "/v2/store/orders",
    "/store/orders",
    "/v1/store",
    "/v1/pets/1",
    "/v1/store/orders/1/items",
    "/V1/STORE/ORDERS",
    "/%76%31/store/orders",
    "/v1//store/orders",
  ),
  fc
    .array(fc.string({ unit: "grapheme", maxLength: 8 }).map(encodeURIComponent), {
      minLength: 1,
      maxLength: 4,
    })
    .map((segments) => `/${segments.join("/")}`),
);

const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method,
    target: fc.oneof(
      fc.constant({ kind: "list" as const }),
      orderSegment.map((segment) => ({ kind: "cancel" as const, segment })),
      fc.constant({ kind: "other" as const }),
    ),
    other: otherPath,
    trailingSlash: fc.boolean(),
    query: fc.option(fc.constantFrom("?limit=1", "?status=shipped", "?a=%zz", "?"), { nil: undefined }),
    authorization,
    contentType,
    body,
  })
  .map(({ method, target, other, trailingSlash, query, authorization, contentType, body }) => {
    const base =
      target.kind === "list" ? LIST : target.kind === "cancel" ? `${LIST}/${target.segment}` : other;
    const path = `${base}${trailingSlash && target.kind === "list" ? "/" : ""}${query ?? ""}`;
    return {
      method,
      path,
      target: target.kind === "other" ? { kind: "other" as const } : target,
      authorization,
      ...(contentType ? { contentType } : {}),
      ...(body !== undefined && !["GET", "HEAD"].includes(method) ? { body } : {}),
    };
  });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(agent: Agent, base: URL, fuzz: FuzzRequest): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (fuzz.authorization.header !== undefined) headers.authorization = fuzz.authorization.header;
  if (fuzz.contentType) headers["content-type"] = fuzz.contentType;
  // Node's client frames a DELETE or TRACE body with neither Content-Length nor chunking unless told.
  if (fuzz.body !== undefined) headers["content-length"] = String(Buffer.byteLength(fuzz.body));
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: fuzz.method,
        path: fuzz.path,
        headers,
        timeout: 10_000,
      },
      (incoming) => {
        let text = "";
        incoming.setEncoding("utf8");
        incoming.on("data", (chunk) => {
          text += chunk;
        });
        incoming.on("end", () =>
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: text }),
        );
        incoming.on("error", reject);
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error("no answer within 10 s")));
    outgoing.on("error", reject);
    outgoing.end(fuzz.body);
  });
}

/** Statuses the spec documents for the operation, or docs/mock-server.md's 404/405/400/413 and the CORS 204. */
function allowedStatuses(fuzz: FuzzRequest): number[] {
  const extra = [400, 413];
  if (fuzz.method === "OPTIONS") return [204, ...extra];
  const query = fuzz.path.indexOf("?");
  const path = query === -1 ? fuzz.path : fuzz.path.slice(0, query);
  if (fuzz.target.kind === "list" && (path === LIST || path === `${LIST}/`)) {
    return fuzz.method === "GET" || fuzz.method === "HEAD" ? [200, 401, ...extra] : [405, ...extra];
  }
  if (fuzz.target.kind === "cancel") {
    return fuzz.method === "DELETE" ? [204, 401, 404, 409, ...extra] : [405, 404, ...extra];
  }
  return [404, 405, 200, 401, 204, 409, ...extra];
}

describe(`the mock under random requests (fast-check, seed ${SEED}, ${RUNS} cases)`, () => {
  let mock: MockProcess;
  let agent: Agent;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });
  after(async () => {
    agent.destroy();
    await mock.stop();
  });

  it("never answers 5xx or drops a connection, answers documented statuses with Error records, and changes state only through a 204", async () => {
    const base = new URL(mock.url);
    const pending = new Set(
      [...fixture.all()].filter((order) => order.status === "pending").map((order) => order.key),
    );
    const known = new Set(knownIds);
    const initialList = await send(agent, base, {
      method: "GET",
      path: LIST,
      target: { kind: "list" },
      authorization: { header: `Bearer ${DEV_KEY}`, valid: true },
    });

    // A broken connection may be the previous request's doing (they share a keep-alive socket): name it.
    let previous: FuzzRequest | undefined;
    await fc.assert(
      fc.asyncProperty(fuzzRequest, async (fuzz) => {
        const answer = await send(agent, base, fuzz).catch((error: Error) => {
          throw new Error(
            `${error.message}; the request before on this connection: ${JSON.stringify(previous)}`,
          );
        });
        previous = fuzz;
        assert.ok(answer.status < 500, `5xx: ${answer.status} ${answer.body}`);
        assert.ok(
          allowedStatuses(fuzz).includes(answer.status),
          `status ${answer.status} is not allowed here`,
        );
        if (answer.status >= 400 && fuzz.method !== "HEAD") {
          assertListedError(answer.status, String(answer.headers["content-type"]), answer.body);
        }
        if (answer.status === 200 && fuzz.method === "GET")
          assert.equal(answer.body, initialList.body, "the list never changes");

        // The model: which order the path names, decided without the server's help.
        let decoded: string | undefined;
        if (fuzz.target.kind === "cancel") {
          try {
            decoded = decodeURIComponent(fuzz.target.segment);
          } catch {
            decoded = undefined;
          }
        }
        const id = decoded === undefined ? null : parseOrderId(decoded);
        const order = id === null ? undefined : id.toString();
        const isCancel =
          fuzz.method === "DELETE" &&
          fuzz.target.kind === "cancel" &&
          !fuzz.path.includes("?") &&
          fuzz.body === undefined;
        if (answer.status === 204 && fuzz.method === "DELETE") {
          assert.ok(fuzz.authorization.valid, "a cancel without a valid key succeeded");
          assert.ok(
            order !== undefined && pending.delete(order),
            `204 for order ${order}, which is not pending`,
          );
        } else if (isCancel && fuzz.authorization.valid && order !== undefined && known.has(order)) {
          assert.equal(answer.status, pending.has(order) ? 204 : 409);
        }
        if (fuzz.method === "DELETE" && fuzz.target.kind === "cancel" && !fuzz.authorization.valid) {
          assert.ok(
            [401, 400, 413].includes(answer.status),
            "without a valid key a cancel is refused before anything else",
          );
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );

    // Every order is where the model says: pending ones cancel now, the others refuse.
    for (const id of knownIds) {
      const answer = await send(agent, base, {
        method: "DELETE",
        path: `${LIST}/${id}`,
        target: { kind: "cancel", segment: id },
        authorization: { header: `Bearer ${DEV_KEY}`, valid: true },
      });
      assert.equal(answer.status, pending.has(id) ? 204 : 409, `order ${id}`);
    }
  });
});
