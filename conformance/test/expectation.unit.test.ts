import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { builtInContract } from "../../contract/built-in.ts";
import { readOperations } from "../../contract/operations.ts";
import { createReader, type LiveRequest } from "../proxy/expectation.ts";

const operations = readOperations(builtInContract());

const request = fc.record({
  method: fc.constantFrom("GET", "DELETE", "POST"),
  path: fc.oneof(
    fc.constantFrom("/store/orders", "/store/orders/", "/store/orders/5", "/store/orders/x", "/other"),
    fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map((id) => `/store/orders/${id}`),
  ),
  hasQuery: fc.boolean(),
  token: fc.option(fc.constantFrom("key", "other"), { nil: undefined }),
});

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

  it("gives a cancel's order id exactly, and no operation to a path the contract has not", () => {
    const read = createReader(operations, true);
    const id = "9223372036854775807";
    assert.equal(
      read({ method: "DELETE", path: `/store/orders/${id}`, hasQuery: false, token: "k" })?.orderId,
      id,
    );
    assert.equal(
      read({ method: "DELETE", path: "/store/orders/1", hasQuery: false, token: "k" })?.orderId,
      "1",
    );
    assert.equal(read({ method: "GET", path: "/other", hasQuery: false, token: "k" }), undefined);
    assert.deepEqual(
      read({ method: "GET", path: "/store/orders", hasQuery: false, token: undefined })?.expectation.expect,
      [401],
    );
  });
});
