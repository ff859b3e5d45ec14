import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { parseExact, stringifyExact } from "../exact-json.ts";
import { JsonStream, JsonStreamError, StreamedArray } from "../json-stream.ts";

/** The text fed in pieces cut at the given byte offsets; the streamed array's elements put back in place. */
function readInPieces(bytes: Uint8Array, cuts: readonly number[], maxDepth = 1000): unknown {
  const elements: unknown[] = [];
  const stream = new JsonStream({ onElement: (value) => elements.push(value), maxDepth });
  let at = 0;
  for (const cut of [...cuts].filter((cut) => cut <= bytes.length).sort((a, b) => a - b)) {
    stream.write(bytes.subarray(at, cut));
    at = cut;
  }
  stream.write(bytes.subarray(at));
  const root = stream.end();
  return stream.streamedArray ? elements : root;
}

function outcome(read: () => unknown): { value: string } | { error: true } {
  try {
    return { value: stringifyExact(read()) };
  } catch {
    return { error: true };
  }
}

const cuts = fc.array(fc.nat({ max: 400 }), { maxLength: 8 });
// Valid JSON of every kind, with escapes, astral and multi-byte characters, big and odd numbers…
const validJson = fc.oneof(
  fc.json({ depthSize: "medium" }),
  fc.jsonValue().map((value) => JSON.stringify(value, null, 2)),
  fc
    .array(
      fc.record({
        id: fc.oneof(
          fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
          fc.constantFrom("1e3", "-0", "1.50", "2E-2"),
        ),
        text: fc.string({ unit: "binary" }),
      }),
    )
    .map(
      (orders) =>
        `[${orders.map(({ id, text }) => `{"id":${id},"s":${JSON.stringify(text)},"t":"\\u00e9\\ud83d\\ude00\\n"}`).join(",")}]`,
    ),
);
// …and texts that are broken somewhere.
const brokenJson = fc.oneof(
  fc.tuple(validJson, fc.nat()).map(([text, at]) => text.slice(0, at % Math.max(text.length, 1))),
  fc
    .tuple(validJson, fc.nat(), fc.constantFrom(",", "]", "}", '"', "\\", "\u0001", "01", "-", "tru"))
    .map(
      ([text, at, junk]) => text.slice(0, at % (text.length + 1)) + junk + text.slice(at % (text.length + 1)),
    ),
  fc.string({ unit: "binary" }),
);

describe("JsonStream", () => {
  test("reads any text as parseExact reads it whole, cut into pieces anywhere", () => {
    fc.assert(
      fc.property(fc.oneof(validJson, brokenJson), cuts, (text, pieces) => {
        const bytes = Buffer.from(text, "utf8");
        assert.deepEqual(
          outcome(() => readInPieces(bytes, pieces)),
          outcome(() => parseExact(bytes.toString("utf8"))),
        );
      }),
      { numRuns: 3000 },
    );
  });

  test("cuts inside a multi-byte character, an escape and a number change nothing", () => {
    const text = '[{"id":12345678901234567890,"name":"é😀\\u00e9\\"x","n":-1.5e-3}]';
    const bytes = Buffer.from(text, "utf8");
    const whole = stringifyExact(parseExact(text));
    for (let cut = 1; cut < bytes.length; cut++) {
      assert.equal(stringifyExact(readInPieces(bytes, [cut])), whole, `cut at byte ${cut}`);
      assert.equal(stringifyExact(readInPieces(bytes, [cut, cut + 1, cut + 3])), whole);
    }
  });

  test("errors name the byte where the text went wrong", () => {
    assert.throws(
      () => readInPieces(Buffer.from('[{"id":1},{"id":01}]'), [12]),
      (error: unknown) => {
        assert.ok(error instanceof JsonStreamError);
        assert.equal(error.offset, 16);
        assert.equal(error.message, "invalid number '01' at byte 16");
        return true;
      },
    );
    assert.throws(
      () => readInPieces(Buffer.from('[{"id":1}'), []),
      /unexpected end of the JSON text at byte 9/,
    );
  });

  test("nesting is bounded without recursion, so no depth overflows the stack", () => {
    const deep = `[{"id":1,"petId":${"[".repeat(100_000)}`;
    assert.throws(() => readInPieces(Buffer.from(deep), [], 64), /nested deeper than 64 levels at byte 79/);
  });

  test("a string past the bound is refused where it began", () => {
    const stream = new JsonStream({ onElement: () => {}, maxStringBytes: 10 });
    assert.throws(
      () => stream.write(Buffer.from('["short","a longer string"]')),
      /a string longer than 10 bytes at byte 9/,
    );
  });

  test("a byte-order mark is skipped only when allowed", () => {
    const text = Buffer.from('\ufeff{"orders":[1,2]}');
    const elements: unknown[] = [];
    const stream = new JsonStream({
      onElement: (value) => elements.push(value),
      field: "orders",
      allowBom: true,
    });
    stream.write(text);
    assert.deepEqual(stream.end(), { orders: new StreamedArray(2) });
    assert.deepEqual(elements, [1, 2]);
    assert.throws(() => readInPieces(text, []), /expected a JSON value, got byte 0xef at byte 0/);
  });
});

/** An account as the proxy's: takes while there is room, and says what it holds. */
class Account {
  held = 0;
  most = 0;
  constructor(readonly limit: number) {}
  tryTake(bytes: number): boolean {
    if (this.held + bytes > this.limit) return false;
    this.held += bytes;
    this.most = Math.max(this.most, this.held);
    return true;
  }
  give(bytes: number): void {
    this.held -= bytes;
  }
}

/** Feeds `text` in 16 KiB pieces; the error the reading stopped with, if any. */
function readWithAccount(text: string, memory: Account): JsonStreamError | undefined {
  const stream = new JsonStream({ onElement: () => {}, memory });
  const bytes = Buffer.from(text);
  try {
    for (let at = 0; at < bytes.length; at += 16 * 1024) stream.write(bytes.subarray(at, at + 16 * 1024));
    stream.end();
    return undefined;
  } catch (error) {
    if (!(error instanceof JsonStreamError)) throw error;
    return error;
  } finally {
    stream.release();
  }
}

describe("JsonStream with a memory account", () => {
  test("a long string across chunks takes its scratch from the account first, and stops where it has none", () => {
    const memory = new Account(1024 * 1024);
    const error = readWithAccount(`[{"id":1},{"id":2,"note":"${"a".repeat(4 * 1024 * 1024)}"}]`, memory);
    assert.equal(error?.limit?.what, "memory");
    assert.equal(error?.offset, 10, "named at the order that needed it");
    assert.ok(memory.most <= memory.limit);
    assert.equal(memory.held, 0, "all given back");
  });

  test("an order with a million fields stops at the account rather than being built whole", () => {
    const fields = Array.from({ length: 1_000_000 }, (_, field) => `"f${field}":${field}`);
    const memory = new Account(2 * 1024 * 1024);
    const error = readWithAccount(`[{${fields.join(",")}}]`, memory);
    assert.equal(error?.limit?.what, "memory");
    assert.ok(memory.most <= memory.limit);
    assert.equal(memory.held, 0);
  });

  test("ordinary orders read within a small account, each one's share given back as it is handed on", () => {
    const memory = new Account(256 * 1024);
    const orders = Array.from({ length: 20_000 }, (_, id) => `{"id":${id},"note":"x\\ny","tags":["a","b"]}`);
    assert.equal(readWithAccount(`[${orders.join(",")}]`, memory), undefined);
    assert.equal(memory.held, 0);
  });
});
