import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { builtInContract } from "../../contract/built-in.ts";
import { createVersionedRouter, readOperations } from "../../contract/operations.ts";
import { NotOrdersPaths } from "../proxy/state-rules/not-orders-paths.ts";

const operations = readOperations(builtInContract());
const route = createVersionedRouter(operations);
const paths = (...values: string[]) => new NotOrdersPaths(values, operations, "--not-orders");
const refusal = (value: string) => {
  try {
    paths(value);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
};

// Segments near the contract's routes and their spellings: letter case, a `.json` suffix, percent-encoding,
// dot segments, an encoded slash, `;` parameters, ids, and another API's.
const segment = fc.oneof(
  fc.constantFrom(
    "v1",
    "V1",
    "%76%31",
    "store",
    "Store",
    "st%6Fre",
    "orders",
    "ORDERS",
    "orders.json",
    "o%72ders",
    "5",
    "5.json",
    "12345678901234567890",
    "pets",
    "petsx",
    "__control",
    "reset",
    ".",
    "..",
    "%2e%2E",
    "",
    "%2F",
    "a;b",
    "..;",
    "x\\y",
  ),
  fc.string({ maxLength: 4 }),
);
const pathLike = fc
  .tuple(fc.array(segment, { maxLength: 7 }), fc.constantFrom("", "/", "?q=1", "#f"))
  .map(([segments, end]) => `/${segments.join("/")}${end}`);
// The contract's routes as clients spell them, with a segment more or less, and dot segments between.
const routeLike = fc
  .tuple(
    fc.constantFrom("v1", "V1", "%76%31", "v1/."),
    fc.constantFrom("store", "Store", "st%6Fre", "store/x/.."),
    fc.constantFrom("orders", "ORDERS", "orders.json", "o%72ders", "orders/"),
    fc.array(segment, { maxLength: 2 }),
    fc.constantFrom("", "/", "?q=1"),
  )
  .map(([v1, store, orders, rest, end]) => `/${[v1, store, orders, ...rest].join("/")}${end}`);
const anyPath = fc.oneof(routeLike, pathLike);
/** A path, and a prefix of it (its first segments) or of another. */
const prefixAndPath = anyPath.chain((path) =>
  fc.tuple(
    fc.oneof(
      fc.nat({ max: 6 }).map(
        (kept) =>
          path
            .split(/[?#]/)[0]
            ?.split("/")
            .slice(0, kept + 1)
            .join("/") ?? "",
      ),
      anyPath,
      fc.string({ maxLength: 12 }),
    ),
    fc.constant(path),
  ),
);
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

describe("--not-orders: path prefixes whose writes touch no order", () => {
  it("covers its path and those under it, segment by segment, and no other", () => {
    const pets = paths("/v1/pets");
    for (const path of ["/v1/pets", "/v1/pets/", "/v1/pets/7", "/v1/pets/7?x=1", "/v1//pets/7", "/v1/%70ets"])
      assert.ok(pets.covers(path), path);
    for (const path of ["/v1/petsx", "/v1/pet", "/v1", "/v1/Pets", "/v2/pets", "/x/v1/pets", "pets"])
      assert.ok(!pets.covers(path), path);
    // A path an upstream may read as another is covered by none: a barrier when in doubt.
    for (const path of [
      "/v1/pets/../../v1/store/orders/5",
      "/v1/pets/%2e%2e/%2E%2E/v1/store/orders",
      "/v1/pets/..;/..;/v1/store/orders",
      "/v1/pets/..%2F..%2Fv1/store/orders",
      "/v1/pets/..\\..\\v1/store/orders",
    ]) {
      assert.ok(!pets.covers(path), path);
      // The upstream may read it as a path of the contract; the router reads most such spellings so.
      if (!path.includes("%2F"))
        assert.ok(
          METHODS.some((method) => route(method, path) !== undefined),
          path,
        );
    }
    assert.ok(paths("/__control/reset").covers("/__control/reset"));
  });

  it("refuses at start, in one line, a value it cannot take or one that covers a path of the contract", () => {
    const refused: Array<[string, RegExp]> = [
      ["v1/pets", /^--not-orders "v1\/pets": a path prefix begins with \/$/],
      ["/v1/pets?x=1", /no query or fragment/],
      ["/v1/pets#top", /no query or fragment/],
      ["/v1/../pets", /no \. or \.\. segment/],
      ["/v1/%2E%2E/pets", /no \. or \.\. segment/],
      ["/v1/pets%2Fx", /no encoded slash/],
      ["/v1/pets;v=2", /percent-encoded/],
      ["/v1/pets 2", /percent-encoded/],
      ["/", /covers GET \/v1\/store\/orders, an operation of the contract/],
      ["/v1", /covers GET \/v1\/store\/orders/],
      ["/V1/Store", /covers GET \/v1\/store\/orders/],
      ["/v1/store/orders.json", /covers GET \/v1\/store\/orders/],
      ["/v1/store/orders/7", /covers DELETE \/v1\/store\/orders\/\{orderId\}/],
    ];
    for (const [value, message] of refused) {
      const said = refusal(value);
      assert.match(said ?? "(taken)", message, value);
      assert.ok(!said?.includes("\n"), value);
    }
    assert.equal(
      refusal("/v1/store/orders/7/notes"),
      undefined,
      "deeper than any route: no route of the contract",
    );
  });

  it("never covers a path the contract routes, whatever the prefix and the path (fast-check)", () => {
    fc.assert(
      fc.property(prefixAndPath, ([value, path]) => {
        let prefixes: NotOrdersPaths;
        try {
          prefixes = paths(value);
        } catch {
          return;
        }
        // What a prefix takes, it covers: itself and what is under it.
        const bare = value.replace(/\/+$/, "");
        assert.ok(prefixes.covers(value), value);
        if (!prefixes.covers(path)) return;
        for (const method of METHODS)
          assert.equal(route(method, path), undefined, `${value} covers ${method} ${path}, a route`);
        assert.ok(!prefixes.covers(`${bare}x`), `${value} covers ${bare}x`);
      }),
      { numRuns: 3000 },
    );
  });
});
