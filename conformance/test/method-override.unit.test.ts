import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { methodOverrides, UNREADABLE_METHOD } from "../proxy/method-override.ts";

describe("the methods a request's method overrides name (methodOverrides)", () => {
  it("reads each header spelling and the _method query parameter, upper-cased", () => {
    assert.deepEqual(methodOverrides({ "x-http-method-override": "DELETE" }, "GET", "/v1/x"), ["DELETE"]);
    assert.deepEqual(methodOverrides({ "x-http-method": "delete" }, "POST", "/v1/x"), ["DELETE"]);
    assert.deepEqual(methodOverrides({ "x-method-override": " put " }, "GET", "/v1/x"), ["PUT"]);
    assert.deepEqual(methodOverrides({}, "GET", "/v1/x?a=1&_method=patch"), ["PATCH"]);
    assert.deepEqual(methodOverrides({}, "GET", "/v1/x?%5Fmethod=DELETE"), ["DELETE"]);
  });

  it("gathers every method named, repeated or listed, but the request's own", () => {
    const headers = { "x-http-method-override": "DELETE, PUT", "x-http-method": "GET" };
    assert.deepEqual(methodOverrides(headers, "GET", "/v1/x?_method=DELETE&_method=PATCH"), [
      "DELETE",
      "PUT",
      "PATCH",
    ]);
    assert.deepEqual(methodOverrides({ "x-http-method-override": "post" }, "POST", "/v1/x"), []);
    assert.deepEqual(methodOverrides({ "x-http-method-override": "" }, "GET", "/v1/x"), []);
  });

  it("names none for a request without one, a query that only mentions the word included", () => {
    assert.deepEqual(methodOverrides({ authorization: "Bearer k" }, "GET", "/v1/store/orders"), []);
    assert.deepEqual(methodOverrides({}, "GET", "/v1/x?method=DELETE&payment_method=card"), []);
  });

  it("keeps a value that is no method token as a method it cannot read, which is no safe one", () => {
    assert.deepEqual(methodOverrides({ "x-http-method-override": "DEL ETE" }, "GET", "/v1/x"), [
      UNREADABLE_METHOD,
    ]);
    assert.deepEqual(methodOverrides({ "x-http-method-override": "X".repeat(17) }, "GET", "/v1/x"), [
      UNREADABLE_METHOD,
    ]);
  });
});
