import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { tempFolder } from "../../common/temp-folder.ts";
import type { Contract } from "../../contract/contract.ts";
import { generatedFixtureText } from "../core/generate.ts";
import { createSeed } from "../core/seed.ts";
import { FixtureError, loadFixtureFile, parseFixture } from "../fixtures.ts";
import { BUNDLED_FIXTURES } from "../options.ts";
import { contract, writeFixture } from "./support.ts";

const order = (fields: string) =>
  `{ "apiKeys": ["k"], "orders": [ { "id": 1, "status": "pending" }, ${fields} ] }`;

/**
 * Why a fixture is refused, read whole (as the in-process mock reads fixture text) and streamed from a file
 * (as petstore-mock reads it): the two give the same message.
 */
async function refusal(text: string | Uint8Array): Promise<string> {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  let whole: string | undefined;
  try {
    parseFixture(bytes, "worlds/bad.json", contract);
  } catch (error) {
    assert.ok(error instanceof FixtureError, String(error));
    whole = error.message;
  }
  assert.ok(whole !== undefined, "the fixture was accepted");
  const path = writeFixture(Buffer.from(bytes));
  const streamed = await loadFixtureFile(path, contract).then(
    () => assert.fail("the fixture file was accepted"),
    (error: unknown) => {
      assert.ok(error instanceof FixtureError, String(error));
      return error.message.replace(path, "worlds/bad.json");
    },
  );
  // Where the text is not JSON, the two readers word the same problem their own way; both name the place.
  if (/not valid JSON/.test(whole))
    assert.match(streamed, /^worlds\/bad\.json: not valid JSON: .* \(line \d+, column \d+\)$/);
  else assert.equal(streamed, whole);
  return whole;
}

// Orders as people write fixture files: fields in any order, white space or none, the status anywhere,
// and now and then a defect or an id seen before.
// Each field right most of the time, and now and then with a defect a fixture file shows.
const rightOrWrong = (right: string[], wrong: string[]) =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...right) },
    { weight: 1, arbitrary: fc.constantFrom(...wrong) },
  );
const fixtureFields = fc.tuple(
  rightOrWrong(
    ['"id":ID', '"id":-ID', '"id":90071992547409ID'],
    ['"id":1', '"id":"3"', '"id":1.0', '"id":-0'],
  ),
  fc.option(rightOrWrong(['"petId":10', '"petId":9223372036854775807'], ['"petId":"10"'])),
  fc.option(rightOrWrong(['"quantity":2', '"quantity":0'], ['"quantity":2.5'])),
  fc.option(
    rightOrWrong(
      ['"shipDate":"2026-11-02T10:00:00Z"', '"shipDate":"2026-11-02T10:00:00.5+01:00"'],
      ['"shipDate":"2026-02-30T10:00:00Z"', '"shipDate":"\\u00e9"', '"shipDate":"é"'],
    ),
  ),
  fc.option(rightOrWrong(['"complete":true', '"complete":false'], ['"complete":null'])),
  rightOrWrong(
    ['"status":"pending"', '"status":"shipped"', '"status":"cancelled"'],
    ['"status":"lost"', '"status":1'],
  ),
  fc.oneof(
    { weight: 20, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constantFrom('"note":1', '"id":ID') },
  ),
);
// Most files write an order's fields in the Order schema's order, as the mock itself writes them.
const fixtureOrder = fc
  .tuple(fixtureFields, fc.constantFrom(",", ", ", " ,\n  "), fc.boolean(), fc.boolean())
  .map(([present, separator, spaced, ordered]) => {
    const fields = present.filter((field): field is string => field !== null);
    if (!ordered) fields.reverse();
    return spaced ? `{ ${fields.join(separator)} }` : `{${fields.join(separator)}}`;
  });
const fixtureFile = fc
  .array(fixtureOrder, { maxLength: 12 })
  // Ids unique by place (ID), but for the few written as constants.
  .map((orders) => orders.map((order, index) => order.replaceAll("ID", String(index + 10))))
  .map((orders) => `{"apiKeys":["k"],"orders":[${orders.join(",\n")}]}`);

/** A fixture's seed (its list body and statuses) or its refusal, from the whole-text reader. */
function readWhole(text: string): { body: string; statuses: string[] } | { refused: string } {
  try {
    const seed = createSeed(parseFixture(Buffer.from(text), "f.json", contract).orders);
    return {
      body: Buffer.from(seed.listBody).toString(),
      statuses: [...seed.all()].map((order) => order.status),
    };
  } catch (error) {
    return { refused: refusalOf(error) };
  }
}

// Where the text is not JSON the two readers word it their own way (see `refusal`).
const refusalOf = (error: unknown) =>
  /: not valid JSON: /.test((error as Error).message) ? "not valid JSON" : (error as Error).message;

describe("fixture loading", () => {
  it("streams a file into the seed the whole-text reader makes, byte for byte, or refuses it alike", async () => {
    const path = writeFixture("");
    await fc.assert(
      fc.asyncProperty(fixtureFile, async (text) => {
        writeFileSync(path, text);
        const streamed = await loadFixtureFile(path, contract).then(
          ({ seed }) => ({
            body: Buffer.from(seed.listBody).toString(),
            statuses: [...seed.all()].map((order) => order.status),
          }),
          (error: Error) => ({ refused: refusalOf(error).replace(path, "f.json") }),
        );
        assert.deepEqual(streamed, readWhole(text));
      }),
      { numRuns: 400 },
    );
  });

  it("loads the bundled fixtures: a dozen orders, mixed statuses, an id above 2^53, one dev key", async () => {
    const { apiKeys, seed } = await loadFixtureFile(BUNDLED_FIXTURES, contract);
    assert.equal(seed.size, 12);
    assert.deepEqual(apiKeys, ["dev-key-123"]);
    const statuses = new Set([...seed.all()].map((order) => order.status));
    assert.ok(statuses.has("pending") && statuses.has("shipped"));
    assert.ok([...seed.all()].some((order) => BigInt(order.key) > 2n ** 53n));
  });

  it("keeps int64 ids exact beyond 2^53 and at the int64 bounds", () => {
    const fixture = parseFixture(
      Buffer.from(
        '{"apiKeys":["k"],"orders":[{"id":9007199254740993,"petId":-9223372036854775808,"status":"pending"},{"id":9223372036854775807,"status":"shipped"}]}',
      ),
      "f.json",
      contract,
    );
    assert.equal(fixture.orders[0]?.record.id, 9007199254740993n);
    assert.equal(fixture.orders[0]?.record.petId, -9223372036854775808n);
    assert.equal(fixture.orders[1]?.record.id, 9223372036854775807n);
  });

  const cases: Array<[string, string | Uint8Array, RegExp]> = [
    [
      "bad JSON",
      '{ "apiKeys": ["k"], "orders": [ { "id": 1, } ] }',
      /worlds\/bad\.json: not valid JSON: .*\(line 1, column \d+\)/,
    ],
    [
      "an unknown status",
      order('{ "id": 2, "status": "lost" }'),
      /orders\[1\] \(id 2\), field "status": unknown status "lost"/,
    ],
    ["a missing status", order('{ "id": 2 }'), /orders\[1\] \(id 2\), field "status": is required/],
    [
      "a duplicate id",
      order('{ "id": 1, "status": "shipped" }'),
      /orders\[1\] \(id 1\), field "id": duplicate id, already used by orders\[0\]/,
    ],
    ["a missing id", order('{ "status": "shipped" }'), /orders\[1\] \(no id\), field "id": is required/],
    [
      "an id above int64",
      order('{ "id": 9223372036854775808, "status": "shipped" }'),
      /orders\[1\] \(id 9223372036854775808\), field "id": must match format "int64"/,
    ],
    [
      "an id below int64",
      order('{ "id": -9223372036854775809, "status": "shipped" }'),
      /field "id": must match format "int64"/,
    ],
    [
      "a petId above int64",
      order('{ "id": 2, "petId": 18446744073709551616, "status": "shipped" }'),
      /orders\[1\] \(id 2\), field "petId": must match format "int64"/,
    ],
    [
      "a bad date-time",
      order('{ "id": 2, "shipDate": "next tuesday", "status": "shipped" }'),
      /orders\[1\] \(id 2\), field "shipDate": must match format "date-time" \(got "next tuesday"\)/,
    ],
    [
      "a date-time without offset",
      order('{ "id": 2, "shipDate": "2026-11-02T10:00:00", "status": "shipped" }'),
      /field "shipDate": must match format "date-time"/,
    ],
    [
      "a wrong type",
      order('{ "id": 2, "quantity": "two", "status": "shipped" }'),
      /orders\[1\] \(id 2\), field "quantity": must be integer \(got "two"\)/,
    ],
    [
      "a fractional id",
      order('{ "id": 2.5, "status": "shipped" }'),
      /orders\[1\] \(id 2.5\), field "id": must be integer/,
    ],
    [
      "an integer in exponent form",
      order('{ "id": 2e1, "status": "shipped" }'),
      /orders\[1\] \(id 2e1\), field "id": write integers as plain digits/,
    ],
    [
      "a boolean as a string",
      order('{ "id": 2, "complete": "yes", "status": "shipped" }'),
      /field "complete": must be boolean/,
    ],
    [
      "an unknown order field",
      order('{ "id": 2, "stauts": "shipped", "status": "shipped" }'),
      /orders\[1\] \(id 2\), field "stauts": unknown field/,
    ],
    ["an order that is not an object", order("42"), /orders\[1\] \(no id\): must be an object/],
    [
      "bad API keys",
      '{ "apiKeys": [""], "orders": [] }',
      /field "apiKeys": must be an array of keys of letters, digits/,
    ],
    [
      "an API key no Bearer header can carry",
      '{ "apiKeys": ["k,ey"], "orders": [] }',
      /field "apiKeys": must be an array of keys of letters, digits/,
    ],
    [
      "orders that are not an array",
      '{ "apiKeys": ["k"], "orders": {} }',
      /field "orders": must be an array/,
    ],
    [
      "an unknown top-level field",
      '{ "apiKeys": ["k"], "orders": [], "order": [] }',
      /unknown top-level field "order"/,
    ],
    ["a top level that is not an object", "[]", /the top level must be an object/],
    [
      "text that is not UTF-8",
      Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
      /worlds\/bad\.json: the file is not valid UTF-8/,
    ],
    [
      "deeply nested junk",
      `{"apiKeys":["k"],"orders":${"[".repeat(200_000)}${"]".repeat(200_000)}}`,
      /not valid JSON: nested too deeply/,
    ],
  ];
  for (const [name, text, message] of cases) {
    it(`refuses ${name}, naming the file, the order and the field`, async () => {
      const text_ = await refusal(text);
      assert.match(text_, message);
      assert.ok(text_.startsWith("worlds/bad.json: "), text_);
    });
  }

  it("reports every problem of a file at once, up to a bound", async () => {
    const orders = Array.from({ length: 15 }, (_, index) => `{ "id": ${index}, "status": "lost" }`).join(",");
    const message = await refusal(`{ "apiKeys": ["k"], "orders": [${orders}] }`);
    assert.match(message, /orders\[0\] \(id 0\)/);
    assert.match(message, /orders\[9\] \(id 9\)/);
    assert.match(message, /… and 5 more/);
  });

  it("refuses prototype-polluting keys without polluting prototypes", async () => {
    const message = await refusal(
      order('{ "id": 2, "status": "shipped", "__proto__": { "polluted": true } }'),
    );
    assert.match(message, /field "__proto__": unknown field/);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.match(
      await refusal('{ "apiKeys": ["k"], "orders": [], "constructor": { "prototype": {} } }'),
      /unknown top-level field "constructor"/,
    );
  });

  it("names a file that cannot be read", async () => {
    await assert.rejects(
      loadFixtureFile("/nonexistent/orders.json", contract),
      /\/nonexistent\/orders.json: cannot read the fixture file \(ENOENT\)/,
    );
  });

  it("reads only regular files: a device or a pipe would never end", async () => {
    await assert.rejects(
      loadFixtureFile("/dev/zero", contract),
      /^FixtureError: \/dev\/zero: not a regular file$/,
    );
    const fifo = join(tempFolder("fixture-fifo-"), "orders.json");
    execFileSync("mkfifo", [fifo]);
    await assert.rejects(loadFixtureFile(fifo, contract), /: not a regular file$/);
  });

  it("refuses a file past the 4 GiB one list answer can hold, at once and naming it, before reading it", async () => {
    const path = writeFixture("");
    truncateSync(path, 2 ** 32 + 1);
    await assert.rejects(
      loadFixtureFile(path, contract),
      /: 4294967297 bytes, larger than the 4 GiB list one answer can hold$/,
    );
    rmSync(path);
  });

  it("has no size limit below that: a large file is read as a stream and judged on what it holds", async () => {
    const path = writeFixture(Buffer.alloc(50 * 1024 * 1024, 0x20));
    await assert.rejects(
      loadFixtureFile(path, contract),
      /: not valid JSON: empty JSON text at byte 52428800 \(line 1, column 52428801\)$/,
    );
  });

  it("reads a large file in pieces: other work runs between every two MiB of it", async () => {
    const text = [...generatedFixtureText(200_000, 3)].join("");
    const path = writeFixture(text, "large.json");
    // Orders read between two turns of the event loop: a load in one piece would read them all in one.
    let read = 0;
    const validate = contract.schema("Order");
    const counted = Object.defineProperty(
      (order: unknown) => {
        read++;
        return validate(order);
      },
      "errors",
      { get: () => validate.errors },
    ) as unknown as typeof validate;
    const counting: Contract = {
      ...contract,
      schema: (name) => (name === "Order" ? counted : contract.schema(name)),
      flatPlan: () => undefined,
    };
    let loading = true;
    let readAtLastTurn = 0;
    let mostInOneTurn = 0;
    const turn = () => {
      mostInOneTurn = Math.max(mostInOneTurn, read - readAtLastTurn);
      readAtLastTurn = read;
      if (loading) setImmediate(turn);
    };
    setImmediate(turn);
    const loaded = await loadFixtureFile(path, counting);
    loading = false;
    assert.equal(read, 200_000);
    assert.equal(loaded.seed.size, 200_000);
    const mebibytes = Buffer.byteLength(text) / 1024 ** 2;
    assert.ok(mebibytes > 16, `the file is ${mebibytes} MiB`);
    const inTwoMebibytes = Math.ceil((200_000 / mebibytes) * 2);
    assert.ok(mostInOneTurn <= inTwoMebibytes, `${mostInOneTurn} orders read in one turn`);
    rmSync(path);
  });

  it("names a bad order deep in a big file by its index and id, and a JSON error by its line", async () => {
    const orders = Array.from({ length: 200_000 }, (_, index) =>
      index === 154_321
        ? '{"id":154322,"quantity":"2","status":"pending"}'
        : `{"id":${index + 1},"status":"pending"}`,
    );
    const path = writeFixture(`{"apiKeys":["k"],"orders":[\n${orders.join(",\n")}\n]}`);
    await assert.rejects(
      loadFixtureFile(path, contract),
      /invalid fixture:\n {2}- orders\[154321\] \(id 154322\), field "quantity": must be integer \(got "2"\)$/,
    );
    const broken = writeFixture(
      `{"apiKeys":["k"],"orders":[\n${orders.slice(0, 1000).join(",\n")},\n{"id":01}]}`,
    );
    await assert.rejects(
      loadFixtureFile(broken, contract),
      /not valid JSON: invalid number '01' at byte \d+ \(line 1002, column 7\)$/,
    );
  });

  it("the whole-text and the streamed readers agree on every document-level case (property)", async () => {
    const value = fc.constantFrom(
      '["k"]',
      "[]",
      '[{"id":1,"status":"pending"}]',
      '[{"id":2,"status":"shipped"},{"id":3,"status":"pending"}]',
      "5",
      "1",
      "0",
      "{}",
      '"orders"',
      "null",
    );
    const key = fc.constantFrom("apiKeys", "orders", "order", "Orders");
    const document = fc
      .array(fc.tuple(key, value), { maxLength: 5 })
      .map((fields) => `{${fields.map(([name, text]) => `"${name}":${text}`).join(",")}}`);
    const root = fc.oneof({ weight: 9, arbitrary: document }, fc.constantFrom("[]", "5", '"x"', "null"));
    const path = writeFixture("", "agree.json");
    await fc.assert(
      fc.asyncProperty(root, async (text) => {
        const outcome = async (read: () => Promise<number>) =>
          read().then(
            (count) => `served ${count}`,
            // The same problems, in the order each reader met them (the streamed one in file order).
            (error: Error) =>
              /not valid JSON/.test(error.message)
                ? "not JSON"
                : error.message
                    .replace(/^[^:]*: /, "")
                    .split("\n")
                    .sort()
                    .join("\n"),
          );
        const whole = await outcome(async () => parseFixture(Buffer.from(text), "f", contract).orders.length);
        writeFileSync(path, text);
        const streamed = await outcome(async () => (await loadFixtureFile(path, contract)).seed.size);
        assert.equal(streamed, whole, text);
      }),
      { numRuns: 600 },
    );
  });

  it("reads a fixture file from disk", async () => {
    const path = writeFixture({ apiKeys: ["k"], orders: [{ id: 1, status: "cancelled" }] });
    assert.equal((await loadFixtureFile(path, contract)).seed.orderAt(0).status, "cancelled");
  });
});
