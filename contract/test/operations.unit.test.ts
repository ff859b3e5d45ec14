import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import fc from "fast-check";
import { builtInContract } from "../built-in.ts";
import {
  createRouter,
  createVersionedRouter,
  pathOf,
  readOperations,
  type Spelling,
  VERSION_PREFIX,
} from "../operations.ts";

const operations = readOperations(builtInContract());
const route = createRouter(operations);

describe("requests routed by the contract's path templates", () => {
  it("finds each operation by method and path, with its path parameters as sent", () => {
    assert.equal(route("GET", "/store/orders")?.operation.operationId, "listOrders");
    const cancel = route("DELETE", "/store/orders/9007199254740993");
    assert.equal(cancel?.operation.operationId, "cancelOrder");
    assert.deepEqual(cancel?.params, { orderId: "9007199254740993" });
    assert.deepEqual(route("DELETE", "/store/orders/a%2Fb")?.params, { orderId: "a%2Fb" });
  });

  it("routes nothing the contract does not have", () => {
    for (const [method, path] of [
      ["DELETE", "/store/orders"],
      ["GET", "/store/orders/1"],
      ["DELETE", "/store/orders/"],
      ["DELETE", "/store/orders/1/2"],
      ["GET", "/store/ordersx"],
      ["HEAD", "/store/orders"],
    ] as const)
      assert.equal(route(method, path), undefined, `${method} ${path}`);
  });

  it("fills a template, each parameter one percent-encoded segment", () => {
    const cancel = operations.get("cancelOrder");
    assert.ok(cancel);
    assert.equal(pathOf(cancel, { orderId: "1/2?x" }), "/store/orders/1%2F2%3Fx");
    assert.equal(route("DELETE", pathOf(cancel, { orderId: "1/2?x" }))?.params.orderId, "1%2F2%3Fx");
  });
});

describe("the version prefix", () => {
  it("is the path every server of openapi.yaml ends with", () => {
    const yaml = readFileSync(new URL("../../openapi.yaml", import.meta.url), "utf8");
    const servers = [...yaml.matchAll(/^\s+default: (\S+)$/gm)].map((match) => match[1] as string);
    assert.ok(servers.length > 0);
    for (const server of servers) assert.equal(new URL(server).pathname, VERSION_PREFIX, server);
  });

  it("routes a request as received: under the prefix, query and fragment aside", () => {
    const versioned = createVersionedRouter(operations);
    assert.equal(
      versioned("GET", `${VERSION_PREFIX}/store/orders?limit=1`)?.operation.operationId,
      "listOrders",
    );
    assert.deepEqual(versioned("DELETE", `${VERSION_PREFIX}/store/orders/5#x`)?.params, { orderId: "5" });
    assert.equal(versioned("GET", "/store/orders"), undefined);
    assert.equal(versioned("GET", `${VERSION_PREFIX}x/store/orders`), undefined);
  });
});

/** A path spelled from its segments, and whether a spelling router would call it a variant of them. */
interface Spelled {
  path: string;
  variant: boolean;
}

/** One segment spelled: letters' case changed, unreserved characters percent-encoded, `;` parameters. */
function spelledSegment(segment: string, literal: boolean): fc.Arbitrary<Spelled> {
  const characters = [...segment].map((character) =>
    fc
      .record({
        recased: fc.boolean(),
        encoded: fc.boolean(),
        lowerHex: fc.boolean(),
      })
      .map(({ recased, encoded, lowerHex }) => {
        const swapped =
          character === character.toLowerCase() ? character.toUpperCase() : character.toLowerCase();
        const cased = literal && recased ? swapped : character;
        if (!encoded) return { path: cased, variant: cased !== character };
        const hex = cased.charCodeAt(0).toString(16).toUpperCase();
        return { path: `%${lowerHex ? hex.toLowerCase() : hex}`, variant: cased !== character };
      }),
  );
  const parameters = fc.option(fc.stringMatching(/^;[a-z0-9=;]{0,6}$/), { nil: undefined });
  return fc.tuple(fc.tuple(...characters), parameters).map(([spelled, after]) => ({
    path: spelled.map((each) => each.path).join("") + (after ?? ""),
    variant: after !== undefined || spelled.some((each) => each.variant),
  }));
}

/**
 * What may come before a segment: one slash or more (or a backslash), and dot segments that cancel out,
 * some with `;` parameters (as Tomcat and Jetty read them: a variant).
 */
const separator: fc.Arbitrary<Spelled> = fc
  .record({
    slashes: fc.constantFrom("/", "/", "/", "//", "\\", "///"),
    dots: fc.constantFrom(
      "",
      "",
      "./",
      "x/../",
      "./abc/../",
      "%2e/",
      "y/%2E%2e/",
      "x/..;/",
      ".;a=1/",
      "y/%2e%2E;/",
    ),
  })
  .map(({ slashes, dots }) => ({
    path: dots === "" ? slashes : `${slashes}${dots}`,
    variant: slashes !== "/" || dots.includes(";"),
  }));

/** The end of a path: nothing, slashes (a last dot segment leaves one), or a `.json` suffix. */
const ending: fc.Arbitrary<Spelled> = fc
  .constantFrom("", "", "", "/", "//", "/.", "/x/..", "/.;x", ".json")
  .map((path) => ({ path, variant: path !== "" }));

/** Random mixes of the spellings of a path's segments. */
function spellings(segments: readonly string[], literals: number): fc.Arbitrary<Spelled> {
  return fc
    .tuple(
      fc.tuple(
        ...segments.map((segment, index) => fc.tuple(separator, spelledSegment(segment, index < literals))),
      ),
      ending,
    )
    .map(([parts, end]) => ({
      path: parts.map(([before, segment]) => before.path + segment.path).join("") + end.path,
      variant: end.variant || parts.some(([before, segment]) => before.variant || segment.variant),
    }));
}

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
const LITERALS = [...VERSION_PREFIX.split("/").slice(1), "store", "orders"];

function replaced(segments: readonly string[], at: number, segment: string): string[] {
  return segments.map((each, index) => (index === at ? segment : each));
}

describe("spellings of a route", () => {
  const versioned = createVersionedRouter(operations);
  const spellingOf = (variant: boolean): Spelling[] => (variant ? ["variant"] : ["exact", "equivalent"]);

  it("routes every spelling of the list to the list, a variant as a variant", () => {
    fc.assert(
      fc.property(
        spellings(LITERALS, LITERALS.length),
        fc.constantFrom("", "?a=1", "#x"),
        (spelled, query) => {
          const routed = versioned("GET", spelled.path + query);
          assert.equal(routed?.operation.operationId, "listOrders", spelled.path);
          assert.ok(
            spellingOf(spelled.variant).includes(routed.spelling),
            `${spelled.path}: ${routed.spelling}`,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("routes every spelling of a cancel to the cancel of the same order", () => {
    fc.assert(
      fc.property(
        int64.chain((id) =>
          spellings([...LITERALS, id], LITERALS.length).map((spelled) => ({ id, spelled })),
        ),
        ({ id, spelled }) => {
          const routed = versioned("DELETE", spelled.path);
          assert.equal(routed?.operation.operationId, "cancelOrder", spelled.path);
          assert.equal(decodeURIComponent(routed.params.orderId ?? ""), id, spelled.path);
          assert.ok(
            spellingOf(spelled.variant).includes(routed.spelling),
            `${spelled.path}: ${routed.spelling}`,
          );
          assert.equal(routed.differs === undefined, routed.spelling === "exact");
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("routes no spelling of a path no operation has", () => {
    // Each: other segments in place of the route's, spelled every way the route's may be.
    const otherLiteral = fc
      .stringMatching(/^[a-zA-Z0-9]{1,8}$/)
      .filter((word) => !LITERALS.some((literal) => literal === word.toLowerCase()));
    const elsewhere = fc.oneof(
      // another literal segment in place of one of the route's
      fc.tuple(fc.nat(LITERALS.length - 1), otherLiteral).map(([at, word]) => replaced(LITERALS, at, word)),
      // two segments joined by an encoded slash, which is not a slash
      fc
        .tuple(fc.nat(LITERALS.length - 2), fc.constantFrom("%2F", "%2f"))
        .map(([at, slash]) => [
          ...LITERALS.slice(0, at),
          `${LITERALS[at]}${slash}${LITERALS[at + 1]}`,
          ...LITERALS.slice(at + 2),
        ]),
      // a segment ending in an encoded slash
      fc.nat(LITERALS.length - 1).map((at) => replaced(LITERALS, at, `${LITERALS[at]}%2F`)),
      // segments past the route's end
      fc.array(otherLiteral, { minLength: 1, maxLength: 2 }).map((more) => [...LITERALS, "5", ...more]),
      // segments missing
      fc.nat(LITERALS.length - 1).map((length) => LITERALS.slice(0, length)),
    );
    fc.assert(
      fc.property(
        elsewhere.chain((segments) => spellings(segments, segments.length)),
        fc.constantFrom("GET", "DELETE"),
        (spelled, method) => {
          const routed = versioned(method, spelled.path);
          assert.equal(routed, undefined, `${method} ${spelled.path}: ${routed?.operation.operationId}`);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("routes what Tomcat, Jetty, Rails and Spring serve as the route to it, as a variant", () => {
    const cancel = versioned("DELETE", "/v1/store/orders/9/..;/3");
    assert.equal(cancel?.operation.operationId, "cancelOrder");
    assert.deepEqual(cancel.params, { orderId: "3" });
    assert.equal(cancel.spelling, "variant");
    assert.deepEqual(versioned("DELETE", "/v1/store/orders/3.json")?.params, { orderId: "3" });
    for (const path of ["/v1/store/x/..;/orders", "/v1/store/.;/orders", "/v1/store/orders.json"])
      assert.equal(versioned("GET", path)?.operation.operationId, "listOrders", path);
    // Methods the contract does not have are no operation, however a server answers them.
    assert.equal(versioned("HEAD", "/v1/store/orders"), undefined);
  });

  it("says what differs in words, and routes a path as RFC 3986 normalizes it", () => {
    const cases: Array<[string, string, Spelling, string | undefined]> = [
      ["GET", "/v1/store/orders", "exact", undefined],
      ["GET", "/v1/store/orders/", "variant", "trailing slash"],
      ["GET", "/v1//store/orders", "variant", "repeated slashes"],
      ["GET", "/v1/store/./orders", "equivalent", "dot segments"],
      ["GET", "/v1/store/%6frders", "equivalent", "percent-encoded unreserved characters"],
      ["GET", "/v1/store/orders;x=1", "variant", "; parameters"],
      ["GET", "/V1/store/orders", "variant", "letter case"],
      ["GET", "/v1/store/orders/.", "variant", "dot segments, trailing slash"],
      ["GET", "/v1\\store/orders", "variant", "backslash for slash"],
      ["DELETE", "/v1/store/orders/a%2fb", "equivalent", "lower-case percent-encoding"],
      ["DELETE", "/v1/store/orders/a%2Fb", "exact", undefined],
      ["GET", "/v1/store/x/..;/orders", "variant", "; parameters, dot segments"],
      ["GET", "/v1/store/.;/orders", "variant", "; parameters, dot segments"],
      ["GET", "/v1/store/orders.json", "variant", ".json suffix"],
      ["DELETE", "/v1/store/orders/3.json", "variant", ".json suffix"],
    ];
    for (const [method, path, spelling, differs] of cases) {
      const routed = versioned(method, path);
      assert.equal(routed?.spelling, spelling, path);
      assert.equal(routed.differs, differs, path);
    }
    // A dot segment is never a parameter: `..` climbs out of the route.
    for (const path of ["/v1/store/orders/..", "/v1/store/orders/.", "/v1/store/orders/%2E%2e"])
      assert.equal(versioned("DELETE", path), undefined, path);
    // A `..` above the root: an upstream under a base path of its own resolves it above that base.
    for (const path of [
      "/v1/../../v1/store/orders",
      "/../v1/store/orders",
      "/v1/store/../../../v1/store/orders",
    ])
      assert.equal(versioned("GET", path), undefined, path);
    assert.equal(versioned("GET", "/v1/../v1/store/orders")?.spelling, "equivalent");
    assert.deepEqual(versioned("DELETE", "/v1/store/orders/5;jsessionid=x")?.params, { orderId: "5" });
    // A dot segment spelled with `;` parameters names no order: it climbs, as Tomcat reads it.
    for (const path of ["/v1/store/orders/.;x", "/v1/store/orders/..;"])
      assert.equal(versioned("DELETE", path), undefined, path);
    // Letters whose Unicode case maps onto ASCII ones (the long s) are not ASCII letters in another case.
    assert.equal(versioned("GET", "/v1/\u017ftore/orders"), undefined);
  });
});

describe("bodies a response may leave out", () => {
  it("reads the 409's Error record from x-optional-content: optional, and checked when present", () => {
    const conflict = operations.get("cancelOrder")?.responses.get(409);
    assert.equal(conflict?.bodyOptional, true);
    assert.ok(conflict?.body, "a 409 body that is present is still checked");
    assert.equal(conflict.body({ code: "order_not_cancellable", message: "shipped", status: 409 }), true);
    assert.equal(conflict.body({ code: "order_not_cancellable" }), false);
  });

  it("keeps every other declared body required", () => {
    for (const operation of operations.values())
      for (const response of operation.responses.values())
        if (response.status !== 409)
          assert.equal(response.bodyOptional, false, `${operation.operationId} ${response.status}`);
  });
});
