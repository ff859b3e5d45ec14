import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { builtInContract } from "../built-in.ts";
import {
  createRouter,
  createVersionedRouter,
  pathOf,
  readOperations,
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
