import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { builtInContract } from "../../contract/built-in.ts";
import { createRouter, readOperations } from "../../contract/operations.ts";
import { createReader, type LiveRequest } from "../proxy/expectation.ts";

const operations = readOperations(builtInContract());
const route = createRouter(operations);

/** A request as the proxy's edge hands it on; undefined for a path of no operation, which is not read. */
function live(
  method: string,
  path: string,
  hasQuery: boolean,
  token: string | undefined,
): LiveRequest | undefined {
  const routed = route(method, path);
  return routed && { routed, hasQuery, token };
}

const request = fc
  .record({
    method: fc.constantFrom("GET", "DELETE", "POST"),
    path: fc.oneof(
      fc.constantFrom("/store/orders", "/store/orders/", "/store/orders/5", "/store/orders/x", "/other"),
      fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map((id) => `/store/orders/${id}`),
    ),
    hasQuery: fc.boolean(),
    token: fc.option(fc.constantFrom("key", "other"), { nil: undefined }),
  })
  .map(({ method, path, hasQuery, token }) => live(method, path, hasQuery, token))
  .filter((routed): routed is LiveRequest => routed !== undefined);

describe("expectation", () => {
  it("reads a request the same whatever was read before it", () => {
    fc.assert(
      fc.property(fc.array(request, { maxLength: 8 }), (requests: LiveRequest[]) => {
        const read = createReader(operations, false);
        for (const one of requests)
          assert.deepEqual(read(one), createReader(operations, false)(one), JSON.stringify(one));
      }),
      { numRuns: 500 },
    );
  });

  it("gives a cancel's order id exactly, and a request without a token 401", () => {
    const read = createReader(operations, true);
    const id = "9223372036854775807";
    assert.equal(read(live("DELETE", `/store/orders/${id}`, false, "k") as LiveRequest)?.orderId, id);
    assert.equal(read(live("DELETE", "/store/orders/1", false, "k") as LiveRequest)?.orderId, "1");
    assert.equal(live("GET", "/other", false, "k"), undefined);
    assert.deepEqual(
      read(live("GET", "/store/orders", false, undefined) as LiveRequest)?.expectation.expect,
      [401],
    );
  });
});
