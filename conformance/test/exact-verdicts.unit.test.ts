import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fullFormats } from "ajv-formats/dist/formats.js";
import fc from "fast-check";
import { isLosslessNumber, parse } from "lossless-json";
import { builtInContract } from "../../contract/built-in.ts";
import { type Operation, readOperations } from "../../contract/operations.ts";
import { judgeListBody, ListJudge } from "../judging/list-judge.ts";
import { checkResponse } from "../judging/response-checks.ts";

const contract = builtInContract();
const options = { validateOrder: contract.schema("Order"), orderPlan: contract.flatPlan("Order") };

/**
 * An oracle of its own: every number kept as its text by lossless-json, and judged on its decimal digits by
 * string work alone (no double, no BigInt arithmetic of the project's), against the Order schema as
 * openapi.yaml writes it, with ajv-formats' date-time.
 */
function decimal(text: string): { integer: boolean; int64: boolean } {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) throw new Error(`not a JSON number: ${text}`);
  const [, sign, whole = "", fraction = "", exponent = "0"] = match;
  // The digits with the decimal point at `point` (which may lie beyond either end), zeros trimmed.
  const all = whole + fraction;
  const leading = (/^0*/.exec(all)?.[0] ?? "").length;
  const digits = all.slice(leading).replace(/0+$/, "");
  if (digits === "") return { integer: true, int64: true };
  const point = whole.length + Number(exponent) - leading;
  const integer = point >= digits.length;
  if (!integer || point > 19) return { integer, int64: false };
  const value = digits.padEnd(point, "0");
  const limit = sign ? "9223372036854775808" : "9223372036854775807";
  return { integer, int64: value.length < 19 || value <= limit };
}

function oracleValid(order: unknown): boolean {
  if (order === null || typeof order !== "object" || Array.isArray(order) || isLosslessNumber(order))
    return false;
  const record = order as Record<string, unknown>;
  const number = (value: unknown) =>
    isLosslessNumber(value) ? decimal((value as { value: string }).value) : undefined;
  for (const field of ["id", "petId"]) {
    if (!(field in record)) continue;
    const judged = number(record[field]);
    if (!judged?.integer || !judged.int64) return false;
  }
  if ("quantity" in record && !number(record.quantity)?.integer) return false;
  if ("shipDate" in record) {
    const date = record.shipDate;
    const check = (fullFormats["date-time"] as { validate: (text: string) => boolean }).validate;
    if (typeof date !== "string" || !check(date)) return false;
  }
  if ("complete" in record && typeof record.complete !== "boolean") return false;
  return true;
}

const integerText = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.constantFrom(
    "9007199254740993",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-0",
  ),
);
const numberText = fc.oneof(
  integerText,
  fc.constantFrom(
    "9007199254740993.5",
    "1e-400",
    "1.00000000000000000001",
    "100000000000000000000.5",
    "1.5",
    "0.0",
    "1e3",
    "1E+2",
    "2.0e1",
    "12.50e1",
    "1.25e1",
    "1e400",
    "-1e-7",
    "9223372036854775807.0",
    "9223372036854775807.5",
    "0.5e1",
    "5e-1",
  ),
);
const field = fc.oneof(
  numberText.map((text) => `"id":${text}`),
  numberText.map((text) => `"petId":${text}`),
  numberText.map((text) => `"quantity":${text}`),
  fc.constantFrom(
    '"shipDate":"2026-11-02T10:00:00Z"',
    '"shipDate":"2026-02-30T10:00:00Z"',
    '"complete":true',
  ),
);
const orderText = fc
  .uniqueArray(field, { maxLength: 4, selector: (text) => text.slice(0, text.indexOf(":")) })
  .map((fields) => `{${fields.join(",")}}`);

describe("verdicts on exact decimal values, beside an independent oracle", () => {
  it("the oracle reads the issue's cases as the spec means them", () => {
    for (const text of ["9007199254740993.5", "1e-400", "1.00000000000000000001", "100000000000000000000.5"])
      assert.equal(decimal(text).integer, false, text);
    for (const text of ["1e3", "2.0e1", "12.50e1", "0.5e1", "-0", "1e400"])
      assert.equal(decimal(text).integer, true, text);
    assert.equal(decimal("9223372036854775807").int64, true);
    assert.equal(decimal("9223372036854775808").int64, false);
    assert.equal(decimal("-9223372036854775808").int64, true);
  });

  it("the list judge gives each order the oracle's verdict: a fraction is never an integer", () => {
    fc.assert(
      fc.property(fc.array(orderText, { minLength: 1, maxLength: 6 }), (orders) => {
        const body = `[${orders.join(",")}]`;
        const verdict = judgeListBody(new TextEncoder().encode(body), options);
        const expected = (parse(body) as unknown[]).filter((order) => !oracleValid(order)).length;
        assert.equal(verdict.invalid.count, expected, `${body}\n${verdict.invalid.first.join("\n")}`);
      }),
      { numRuns: 3_000 },
    );
  });

  it("names the fractions of the issue as not integers, in the list and in an Error record", () => {
    for (const order of [
      '{"id":9007199254740993.5}',
      '{"id":1e-400}',
      '{"id":1.00000000000000000001}',
      '{"id":1,"quantity":100000000000000000000.5}',
    ]) {
      const verdict = judgeListBody(new TextEncoder().encode(`[${order}]`), options);
      assert.equal(verdict.invalid.count, 1, order);
      assert.match(verdict.invalid.first[0] ?? "", /must be integer/, order);
    }
    const exchange = {
      request: { method: "DELETE", path: "/v1/store/orders/1", headers: {} },
      response: {
        status: 404,
        headers: { "content-type": "application/json" },
        body: '{"code":"order_not_found","message":"no","status":404.0000000000000000001}',
        received: 80,
      },
    };
    const operation = readOperations(contract).get("cancelOrder") as Operation;
    const checked = checkResponse(exchange as never, operation, [404], "§4.2", "case", {
      errorRecord: contract.schema("Error"),
    });
    const body = checked.checks.find((check) => check.id === "case.body");
    assert.equal(body?.status, "failed");
    assert.match(body?.message ?? "", /status must be integer/);
  });
});

describe("bodies that are not UTF-8", () => {
  const bytesOf = (...parts: Array<string | number[]>) =>
    Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : Buffer.from(part))));

  it("a list is an encoding failure naming the byte, in any field, however the bytes are cut", () => {
    for (const [body, at] of [
      [bytesOf('[{"id":1,"note":"', [0xff], '"}]'), 17],
      [bytesOf('[{"id":1,"shipDate":"2026-11-02T10:00:00', [0xc3], 'Z"}]'), 40],
      [bytesOf('[{"id":1,"note":"', [0xed, 0xa0, 0x80], '"}]'), 17],
      [bytesOf('[{"id":1,"note":"', [0xf4, 0x90, 0x80, 0x80], '"}]'), 17],
      [bytesOf('[{"id":1,"note":"', [0xc0, 0xaf], '"}]'), 17],
    ] as const) {
      for (const cut of [1, 3, body.length]) {
        // A character cut between chunks is named by its offset; its first byte may have gone by.
        const judge = new ListJudge(options);
        for (let from = 0; from < body.length; from += cut) judge.write(body.subarray(from, from + cut));
        const verdict = judge.end();
        assert.match(
          verdict.syntax ?? "",
          new RegExp(`not UTF-8, which JSON must be \\(RFC 8259 §8\\.1\\): the character at byte ${at} `),
          `${body.toString("hex")} in ${cut}s`,
        );
        assert.equal(
          verdict.invalid.count,
          0,
          "no date-time or schema error for a byte that is no character",
        );
      }
    }
  });

  it("an Error record is an encoding failure too", () => {
    const exchange = {
      request: { method: "DELETE", path: "/v1/store/orders/1", headers: {} },
      response: {
        status: 404,
        headers: { "content-type": "application/json" },
        body: '{"code":"order_not_found","message":"�","status":404}',
        notUtf8:
          "it is not UTF-8, which JSON must be (RFC 8259 §8.1): the character at byte 38 (0xff) is not one",
        received: 52,
      },
    };
    const operation = readOperations(contract).get("cancelOrder") as Operation;
    const checked = checkResponse(exchange as never, operation, [404], "§4.2", "case", {
      errorRecord: contract.schema("Error"),
    });
    const body = checked.checks.find((check) => check.id === "case.body");
    assert.equal(body?.status, "failed");
    assert.match(body?.message ?? "", /^the body is not valid JSON: it is not UTF-8/);
  });
});

describe("the judge's reader limits are limits, not verdicts", () => {
  const nested = (levels: number) => `${"[".repeat(levels)}1${"]".repeat(levels)}`;

  it("an order nested past --max-depth is not judged, naming the limit and its flag; within it, judged", () => {
    // The list and the order take two levels; the note holds the rest.
    const body = (levels: number) => new TextEncoder().encode(`[{"id":1,"note":${nested(levels)}}]`);
    const within = judgeListBody(body(62), options);
    assert.equal(within.limit, undefined);
    assert.equal(within.syntax, undefined);
    assert.equal(within.invalid.count, 0, "a valid order, however deep its extra field");
    const past = judgeListBody(body(63), options);
    assert.equal(past.syntax, undefined, "never 'not valid JSON'");
    assert.deepEqual(past.limit, { what: "depth", bound: 64, offset: 78 });
    const raised = judgeListBody(body(63), { ...options, maxDepth: 100 });
    assert.equal(raised.limit, undefined);
    const operation = readOperations(contract).get("listOrders") as Operation;
    const exchange = {
      request: { method: "GET", path: "/v1/store/orders", headers: {} },
      response: {
        status: 200,
        headers: { "content-type": "application/json" },
        body: "",
        received: 1,
        list: past,
      },
    };
    const checked = checkResponse(exchange as never, operation, [200], "§4.1", "case", {
      orderRecord: options.validateOrder,
    });
    const check = checked.checks.find((each) => each.id === "case.body");
    assert.equal(check?.status, "skipped");
    assert.equal(
      check?.message,
      "not judged: the body goes past the judge's limit of 64 levels of nesting at byte 78, a bound of this reader and not of JSON (readerLimits.maxDepth raises it)",
    );
  });

  it("long strings and numbers have limits of their own, with their flags", () => {
    const string = judgeListBody(new TextEncoder().encode(`[{"id":1,"note":"${"x".repeat(100)}"}]`), {
      ...options,
      maxStringBytes: 50,
    });
    assert.equal(string.limit?.what, "string");
    const number = judgeListBody(
      new TextEncoder().encode(`[{"id":1,"quantity":${"9".repeat(5000)}}]`),
      options,
    );
    assert.deepEqual(number.limit, { what: "number", bound: 4096, offset: 20 });
  });
});
