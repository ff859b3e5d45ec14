import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
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

  it("reads `_method` in any spelling a query parser decodes to it: percent-encoded, any case, PHP's", () => {
    const spelled = (text: string) =>
      fc
        .array(fc.constantFrom("as is", "encoded", "encoded lower"), {
          minLength: text.length,
          maxLength: text.length,
        })
        .map((ways) =>
          [...text]
            .map((char, at) => {
              const hex = (char.codePointAt(0) as number).toString(16).toUpperCase().padStart(2, "0");
              if (ways[at] === "encoded") return `%${hex}`;
              return ways[at] === "encoded lower" ? `%${hex.toLowerCase()}` : char;
            })
            .join(""),
        );
    const names = fc
      .tuple(
        fc.constantFrom("_", "%5F", "%5f", ".", "%2E", "+_", "+."),
        fc.constantFrom("method", "METHOD", "Method"),
      )
      .chain(([first, rest]) => spelled(rest).map((encoded) => `${first}${encoded}`));
    fc.assert(
      fc.property(names, spelled("DELETE"), fc.boolean(), (name, value, before) => {
        const query = before ? `a=1&${name}=${value}` : `${name}=${value}&b=2`;
        assert.deepEqual(methodOverrides({}, "GET", `/v1/store/orders/2?${query}`), ["DELETE"]);
      }),
    );
  });

  it("reads each override header spelled with `_` for `-`, in any case, as WSGI servers do", () => {
    const names = fc
      .constantFrom("x-http-method-override", "x-http-method", "x-method-override")
      .chain((name) =>
        fc
          .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
          .map((underscores) => [...name].map((c, at) => (c === "-" && underscores[at] ? "_" : c)).join("")),
      );
    fc.assert(
      fc.property(names, (name) => {
        assert.deepEqual(methodOverrides({ [name]: "DELETE" }, "GET", "/v1/store/orders/2"), ["DELETE"]);
      }),
    );
  });

  it("reads no other name as `_method`", () => {
    for (const query of ["__method=DELETE", "_method_=DELETE", "x_method=DELETE", "_meth%6Fd2=DELETE"])
      assert.deepEqual(methodOverrides({}, "GET", `/v1/x?${query}`), [], query);
    assert.deepEqual(methodOverrides({ "x-http-method-overrides": "DELETE" }, "GET", "/v1/x"), []);
  });
});
