import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ValidateFunction } from "ajv";
import fc from "fast-check";
import { builtInContract } from "../../contract/built-in.ts";
import { WatchedLists } from "../explore/watched-list.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import { ListJudge, type ListVerdict, type ReaderLimits } from "../judging/list-judge.ts";

const contract = builtInContract();
const validateOrder = contract.schema("Order") as ValidateFunction;
const orderPlan = contract.flatPlan("Order");
const watch = new Set(["3", "9007199254740993", "9223372036854775807", "-9223372036854775808", "-12"]);

function inPieces(reading: ListReading, bytes: Buffer, cuts: readonly number[]): ListVerdict {
  let at = 0;
  for (const cut of [...cuts].filter((cut) => cut <= bytes.length).sort((a, b) => a - b)) {
    reading.write(bytes.subarray(at, cut));
    at = cut;
  }
  reading.write(bytes.subarray(at));
  return reading.end();
}

function fullJudge(limits: ReaderLimits, watched: ReadonlySet<string> = watch): ListReading {
  const judge = new ListJudge({ validateOrder, orderPlan, watch: watched, watchedOnly: true, ...limits });
  return { write: (chunk) => judge.write(chunk), end: () => judge.end(), abandon: () => judge.drop() };
}

// Orders as deployments write them, right or with each kind of fault, and text that is no list.
const id = fc.oneof(
  fc.integer({ min: -15, max: 30 }).map(String),
  fc.constantFrom("9007199254740993", "9223372036854775807", "-9223372036854775808", "9223372036854775806"),
  fc.constantFrom("1e1", "2.0E+1", "-0", "03", "1.5", "9223372036854775808", "-9223372036854775809"),
  fc.constantFrom("12345678901234567890", '"7"', '"3"', "null", "true", "[1]", "{}", "1e999999999", "-"),
);
const field = fc.oneof(
  id.map((value) => `"id":${value}`),
  fc.constantFrom('"petId":10', '"petId":12345678901234567890', '"petId":"10"', '"petId":1234567890123456'),
  fc.constantFrom('"quantity":2', '"quantity":"2"', '"quantity":2.5', '"quantity":-0', '"quantity" : 07'),
  fc.constantFrom(
    '"shipDate":"2026-11-02T10:00:00Z"',
    '"shipDate":"2026-11-26T16:29:18.123Z"',
    '"shipDate":"2026-02-30T10:00:00Z"',
    '"shipDate":"é😀\\u00e9"',
    '"shipDate":"a\\"b"',
  ),
  fc.constantFrom('"complete":true', '"complete":"yes"', '"complete":fals', '"status":"shipped"'),
  fc.constantFrom('"note":{"deep":[[1,{"a":"\\""}]]}', '"note":[]', '"note":null', '"note":"plain"'),
  fc.constantFrom('"nøte":1', '"__proto__":1', '"a\\u0062":2', `"${"k".repeat(40)}":1`, '"id":3', '"":1'),
);
const order = fc.oneof(
  {
    weight: 9,
    arbitrary: fc
      .tuple(
        fc.array(field, { maxLength: 7 }),
        fc.constantFrom(",", " , ", ",\n\t"),
        fc.constantFrom("", " "),
      )
      .map(([fields, separator, pad]) => `{${pad}${fields.join(separator)}${pad}}`),
  },
  { weight: 1, arbitrary: fc.constantFrom("1", "-3", '"order"', "null", "true", "[]", "[{}]", "1x", "nul") },
);
const list = fc
  .tuple(
    fc.array(order, { maxLength: 20 }),
    fc.constantFrom(",", ",\n ", " ,"),
    fc.constantFrom("", " ", "\n"),
  )
  .map(([orders, separator, pad]) => `${pad}[${pad}${orders.join(separator)}${pad}]${pad}`);
const broken = fc.oneof(
  fc.tuple(list, fc.nat()).map(([text, at]) => text.slice(0, at % Math.max(text.length, 1))),
  fc
    .tuple(list, fc.nat(), fc.constantFrom("x", ",", "]", "}", "\u00ff", "["))
    .map(
      ([text, at, extra]) =>
        text.slice(0, at % Math.max(text.length, 1)) + extra + text.slice(at % Math.max(text.length, 1)),
    ),
  fc.constantFrom('{"orders":[]}', '"[]"', "[] []", "", "  ", " {}", "[1,]", "[,1]", "\ufeff[]", "[]x"),
);
const limits = fc.oneof(
  { weight: 3, arbitrary: fc.constant<ReaderLimits>({}) },
  {
    weight: 1,
    arbitrary: fc.record(
      { maxDepth: fc.integer({ min: 1, max: 4 }), maxStringBytes: fc.integer({ min: 1, max: 30 }) },
      { requiredKeys: [] },
    ),
  },
);
const cuts = fc.array(fc.nat({ max: 1500 }), { maxLength: 10 });

describe("explore's reading of lists", () => {
  // With bounds set, the judge's own stream may say which bound a value broke differently when the value
  // is cut by a chunk's end (a key read whole is not held to the string bound); this reading judges each
  // order of a list whole, as the judge does a body given in one chunk.
  test("says what a ListJudge of the watched orders says, of the list and each watched order, however cut", () => {
    fc.assert(
      fc.property(
        fc.oneof({ weight: 3, arbitrary: list }, { weight: 1, arbitrary: broken }),
        cuts,
        limits,
        (text, pieces, readerLimits) => {
          const bytes = Buffer.from(text, "utf8");
          // A root that is no array is given to a ListJudge as it comes.
          const bounded = Object.keys(readerLimits).length > 0 && text.trimStart().startsWith("[");
          const full = inPieces(fullJudge(readerLimits), bytes, bounded ? [] : pieces);
          const lists = new WatchedLists({ validateOrder, orderPlan, readerLimits });
          const lean = inPieces(lists.reading(watch), bytes, pieces);
          assert.equal(lean.syntax, full.syntax);
          assert.deepEqual(lean.limit, full.limit);
          assert.equal(lean.notArray === undefined, full.notArray === undefined);
          assert.equal(lean.count, full.count);
          assert.equal(lean.unindexed, full.unindexed);
          assert.equal(lean.invalid.count, full.invalid.count);
          assert.deepEqual(lean.invalid.first, full.invalid.first);
          assert.equal(lean.exposingStatus.count, full.exposingStatus.count);
          assert.deepEqual(lean.duplicates, full.duplicates);
          for (const id of watch) {
            assert.equal(lean.orders.has(id), full.orders.has(id), id);
            assert.equal(lean.records.get(id), full.records.get(id), id);
            assert.equal(lean.orders.recordDigest(id), full.orders.recordDigest(id), id);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("the same with bytes that are no UTF-8, and with many ids watched", () => {
    const many = new Set([...watch, ...Array.from({ length: 20 }, (_, at) => String(at + 20))]);
    fc.assert(
      fc.property(list, fc.nat(), cuts, fc.boolean(), (text, at, pieces, corrupt) => {
        const utf8 = Buffer.from(text, "utf8");
        const place = at % (utf8.length + 1);
        const bytes = corrupt
          ? Buffer.concat([utf8.subarray(0, place), Buffer.from([0xff]), utf8.subarray(place)])
          : utf8;
        const judge = new ListJudge({ validateOrder, orderPlan, watch: many, watchedOnly: true });
        const full = inPieces(
          { write: (chunk) => judge.write(chunk), end: () => judge.end(), abandon: () => judge.drop() },
          bytes,
          pieces,
        );
        const lean = inPieces(new WatchedLists({ validateOrder, orderPlan }).reading(many), bytes, pieces);
        // Which fault is named first may differ: an order cut by a chunk's end is judged once it is whole.
        assert.equal(lean.syntax === undefined, full.syntax === undefined);
        assert.equal(lean.count, full.count);
        assert.equal(lean.unindexed, full.unindexed);
        for (const id of many) assert.equal(lean.records.get(id), full.records.get(id), id);
      }),
      { numRuns: 2000 },
    );
  });

  test("a run's lists read one after another, sharing orders, say what a fresh judge of each says", () => {
    // Orders read before are known by their bytes up to their first "}": some hold one in a string.
    const tricky = fc.constantFrom(
      '{"id":3,"shipDate":"}"}',
      '{"id":3,"shipDate":"}","petId":1}',
      '{"id":3}',
      '{"id":3 }',
      '{"id":-12,"petId":1,"quantity":1}',
      '{"id":9223372036854775807,"complete":false}',
      '{"id":"3"}',
      '{"petId":1,"id":9007199254740993}',
    );
    const pool = fc.array(fc.oneof(order, tricky), { minLength: 1, maxLength: 12 });
    const listOf = (orders: readonly string[]) =>
      fc.array(fc.constantFrom(...orders), { maxLength: 12 }).map((picked) => `[${picked.join(",")}]`);
    const run = pool.chain((orders) =>
      fc.array(fc.tuple(listOf(orders), fc.subarray([...watch]), cuts), { minLength: 2, maxLength: 6 }),
    );
    fc.assert(
      fc.property(run, limits, (lists, readerLimits) => {
        const reader = new WatchedLists({ validateOrder, orderPlan, readerLimits });
        for (const [text, watched, pieces] of lists) {
          const bytes = Buffer.from(text, "utf8");
          const ids = new Set(watched);
          const full = inPieces(fullJudge(readerLimits, ids), bytes, []);
          const lean = inPieces(reader.reading(ids), bytes, pieces);
          assert.equal(lean.syntax === undefined, full.syntax === undefined, text);
          assert.equal(lean.count, full.count, text);
          assert.equal(lean.unindexed, full.unindexed, text);
          assert.deepEqual(lean.duplicates, full.duplicates, text);
          for (const id of watch)
            assert.equal(lean.records.get(id), full.records.get(id), `${id} in ${text}`);
        }
      }),
      { numRuns: 1500 },
    );
  });

  test("a list read again with the same bytes, watching other orders, says what a fresh judge of it says", () => {
    // Each list of the run is a new one or one read before, whole in one chunk or in pieces; many hold
    // plain orders only, as a deployment's lists do.
    const plain = fc
      .array(
        fc
          .tuple(
            fc.constantFrom(
              "3",
              "-12",
              "7",
              "9007199254740993",
              "9223372036854775807",
              "9223372036854775806",
            ),
            fc.constantFrom(
              '"petId":1',
              '"quantity":2',
              '"shipDate":"2026-11-02T10:00:00Z"',
              '"complete":true',
            ),
          )
          .map(([id, other]) => `{"id":${id},${other}}`),
        { maxLength: 12 },
      )
      .map((orders) => `[${orders.join(",")}]`);
    const run = fc.array(
      fc.tuple(fc.oneof(list, plain, fc.nat()), fc.subarray([...watch]), fc.oneof(fc.constant([]), cuts)),
      { minLength: 2, maxLength: 8 },
    );
    fc.assert(
      fc.property(run, limits, (steps, readerLimits) => {
        const reader = new WatchedLists({ validateOrder, orderPlan, readerLimits });
        const texts: string[] = [];
        for (const [drawn, watched, pieces] of steps) {
          const text = typeof drawn === "string" ? drawn : (texts[drawn % Math.max(texts.length, 1)] ?? "[]");
          texts.push(text);
          const bytes = Buffer.from(text, "utf8");
          const ids = new Set(watched);
          const full = inPieces(fullJudge(readerLimits, ids), bytes, []);
          const lean = inPieces(reader.reading(ids), bytes, pieces);
          assert.equal(lean.syntax, full.syntax, text);
          assert.deepEqual(lean.limit, full.limit, text);
          assert.equal(lean.count, full.count, text);
          assert.equal(lean.unindexed, full.unindexed, text);
          assert.deepEqual(lean.invalid, full.invalid, text);
          assert.deepEqual(lean.duplicates, full.duplicates, text);
          for (const id of watch) {
            assert.equal(lean.records.get(id), full.records.get(id), `${id} in ${text}`);
            assert.equal(lean.orders.recordDigest(id), full.orders.recordDigest(id), `${id} in ${text}`);
          }
        }
      }),
      { numRuns: 1500 },
    );
  });

  test("a watched order listed again with the same bytes is the same record, remembered", () => {
    const lists = new WatchedLists({ validateOrder, orderPlan });
    const body = Buffer.from('[{"id":3,"petId":1,"quantity":1},{"id":4}]');
    const first = inPieces(lists.reading(watch), body, []);
    const again = inPieces(lists.reading(watch), body, [9]);
    assert.equal(first.records.get("3"), '{"id":3,"petId":1,"quantity":1}');
    assert.equal(again.records.get("3"), first.records.get("3"));
    assert.equal(again.count, 2);
  });

  test("a word broken by a character past ASCII is judged as the judge reads it, wherever it is cut", () => {
    for (const text of ["[nul\u00ffl]", "[tr\u20acue]", "[f\u{1f600}alse]", '[{"id":3},n\u00e9ull]']) {
      const body = Buffer.from(text, "utf8");
      const full = inPieces(fullJudge({}), body, []);
      for (let cut = 0; cut <= body.length; cut++) {
        const lean = inPieces(new WatchedLists({ validateOrder, orderPlan }).reading(watch), body, [cut]);
        assert.equal(lean.syntax, full.syntax, `${text} cut at ${cut}`);
      }
    }
  });

  test("an element that is a bare number is judged in one piece, as the judge reads it, under a small bound", () => {
    const limits = { maxNumberChars: 10 };
    const body = Buffer.from("[12345678901]");
    const lean = inPieces(
      new WatchedLists({ validateOrder, orderPlan, readerLimits: limits }).reading(watch),
      body,
      [],
    );
    const full = inPieces(fullJudge(limits), body, []);
    assert.deepEqual([lean.limit, lean.count, lean.unindexed], [full.limit, full.count, full.unindexed]);
  });

  test("a run whose lists the plain reading mostly declines reads later lists with one judge, the same verdict", () => {
    const lists = new WatchedLists({ validateOrder, orderPlan });
    const nested = (id: number) => `{"id":${id},"petId":1,"quantity":1,"tags":["a"]}`;
    const body = Buffer.from(`[${Array.from({ length: 40 }, (_, at) => nested(at)).join(",")}]`);
    const full = inPieces(fullJudge({}), body, []);
    const first = inPieces(lists.reading(watch), body, [100]);
    assert.equal(lists.judgesWhole, true);
    const later = inPieces(lists.reading(watch), body, [100]);
    for (const verdict of [first, later]) {
      assert.deepEqual(
        [verdict.count, verdict.unindexed, verdict.syntax],
        [full.count, full.unindexed, full.syntax],
      );
      assert.equal(verdict.records.get("3"), full.records.get("3"));
    }
    const flat = new WatchedLists({ validateOrder, orderPlan });
    inPieces(flat.reading(watch), Buffer.from('[{"id":3,"petId":1,"quantity":1},{"id":4}]'), []);
    assert.equal(flat.judgesWhole, false);
  });
});
