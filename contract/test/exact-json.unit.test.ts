import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { exactInteger, parseExact, stringifyExact, toSchemaView } from "../exact-json.ts";
import { loadContract } from "../openapi.ts";

const order = loadContract().schema("Order");
const validId = (literal: string) => order(toSchemaView(parseExact(`{"id":${literal}}`)));

describe("exact JSON numbers", () => {
  it("reads the integer a literal denotes", () => {
    assert.equal(exactInteger("9007199254740993"), 9007199254740993n);
    assert.equal(exactInteger("-9223372036854775808"), -(2n ** 63n));
    assert.equal(exactInteger("1.2e1"), 12n);
    assert.equal(exactInteger("1200e-2"), 12n);
    assert.equal(exactInteger("-0"), 0n);
    assert.equal(exactInteger("0.0e999999999"), 0n);
    assert.equal(exactInteger("1.5"), null);
    assert.equal(exactInteger("1e-999999999"), null);
    assert.equal(exactInteger("1e999999999"), 10n ** 400n);
  });

  it("judges int64 on the exact value, not on a rounded double", () => {
    for (const inside of [
      "0",
      "9007199254740993",
      "9223372036854775807",
      "-9223372036854775808",
      "9.223372036854775807e18",
    ]) {
      assert.ok(validId(inside), `${inside} is int64`);
    }
    // Each of these rounds to a double that ajv-formats alone would accept as int64.
    for (const outside of [
      "9223372036854775808",
      "-9223372036854775809",
      "18446744073709551616",
      "1e19",
      "1e400",
    ]) {
      assert.ok(!validId(outside), `${outside} is not int64`);
    }
    assert.ok(!validId("1.5"));
  });

  it("writes numbers back digit for digit", () => {
    const text = '[{"id":9223372036854775807,"petId":9007199254740993,"quantity":1}]';
    assert.equal(stringifyExact(parseExact(text)), text);
    assert.equal(stringifyExact({ id: 9007199254740993n }), '{"id":9007199254740993}');
  });

  it("parses __proto__ as an ordinary key", () => {
    const value = parseExact('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    const view = toSchemaView(value) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(view), Object.prototype);
    assert.ok(Object.hasOwn(view, "__proto__"));
  });
});
