import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { builtInContract } from "../../contract/built-in.ts";
import {
  exactInteger,
  INT64_MAX,
  INT64_MIN,
  isJsonNumber,
  numberText,
  parseExact,
  toSchemaView,
} from "../../contract/exact-json.ts";
import { flatRecordPlan } from "../../contract/flat-record.ts";
import { ListJudge, type ListJudgeOptions, type ListVerdict } from "../judging/list-judge.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";

const contract = builtInContract();
const validateOrder = contract.schema("Order");
const orderPlan = contract.flatPlan("Order");

/** The verdict as judging the whole body at once gives it: parsed whole, each order validated. */
function wholeBodyVerdict(text: string) {
  let body: unknown;
  try {
    body = parseExact(text);
  } catch {
    return { syntax: true };
  }
  if (!Array.isArray(body)) return { notArray: true };
  const invalid: number[] = [];
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  let exposing = 0;
  let unindexed = 0;
  body.forEach((order, index) => {
    if (!validateOrder(toSchemaView(order))) invalid.push(index);
    const record =
      order !== null && typeof order === "object" && !Array.isArray(order) && !isJsonNumber(order);
    if (record && "status" in order) exposing++;
    const id = record ? (order as { id?: unknown }).id : undefined;
    const integer = isJsonNumber(id) ? exactInteger(numberText(id)) : null;
    if (integer === null || integer < INT64_MIN || integer > INT64_MAX) {
      unindexed++;
      return;
    }
    const key = String(integer);
    if (seen.has(key)) duplicates.add(key);
    seen.add(key);
  });
  return {
    count: body.length,
    invalid: invalid.length,
    firstInvalid: invalid.slice(0, 10),
    duplicates: duplicates.size,
    exposing,
    unindexed,
    distinct: seen.size,
  };
}

function summary(verdict: ListVerdict) {
  if (verdict.syntax !== undefined) return { syntax: true };
  if (verdict.notArray) return { notArray: true };
  return {
    count: verdict.count,
    invalid: verdict.invalid.count,
    firstInvalid: verdict.invalid.first.map((message) => Number(/^orders\[(\d+)\]/.exec(message)?.[1])),
    duplicates: verdict.duplicates.count,
    exposing: verdict.exposingStatus.count,
    unindexed: verdict.unindexed,
    distinct: verdict.orders.size,
  };
}

function judgeInPieces(
  bytes: Buffer,
  cuts: readonly number[],
  options: Partial<ListJudgeOptions> = { orderPlan },
): ListVerdict {
  const judge = new ListJudge({ validateOrder, ...options });
  let at = 0;
  for (const cut of [...cuts].filter((cut) => cut <= bytes.length).sort((a, b) => a - b)) {
    judge.write(bytes.subarray(at, cut));
    at = cut;
  }
  judge.write(bytes.subarray(at));
  return judge.end();
}

// One field of an order, right or with each kind of defect a deployment shows.
const id = fc.oneof(
  fc.integer({ min: 1, max: 30 }).map(String),
  fc.constantFrom("9007199254740993", "9223372036854775807", "-9223372036854775808", "1e1", "2.0E+1", "-0"),
  fc.constantFrom("1.5", "9223372036854775808", '"7"', "null", "[1]", "1e999999999"),
);
const field = fc.oneof(
  id.map((value) => `"id":${value}`),
  fc.constantFrom('"petId":10', '"petId":12345678901234567890', '"petId":"10"'),
  fc.constantFrom('"quantity":2', '"quantity":"2"', '"quantity":2.5', '"quantity":-0'),
  fc.constantFrom(
    '"shipDate":"2026-11-02T10:00:00Z"',
    '"shipDate":"2026-02-30T10:00:00Z"',
    '"shipDate":"2026-11-02 10:00:00+01:00"',
    '"shipDate":"é😀\\u00e9"',
  ),
  fc.constantFrom(
    '"complete":true',
    '"complete":"yes"',
    '"status":"shipped"',
    '"note":{"deep":[[1,{"a":"\\""}]]}',
  ),
  fc.constantFrom(
    '"note":null',
    '"note":false',
    '"note":"plain"',
    '"nøte":1',
    '"__proto__":1',
    '"a\\u0062":2',
  ),
);
const order = fc.oneof(
  {
    weight: 9,
    arbitrary: fc
      .tuple(
        fc.uniqueArray(field, { maxLength: 6, selector: (text) => text.slice(0, text.indexOf(":")) }),
        fc.constantFrom(",", " , ", ",\n\t"),
      )
      .map(([fields, separator]) => `{${fields.join(separator)}}`),
  },
  { weight: 1, arbitrary: fc.constantFrom("1", '"order"', "null", "[]") },
);
const list = fc.array(order, { maxLength: 25 }).map((orders) => `[${orders.join(",\n ")}]`);
const broken = fc.oneof(
  fc.tuple(list, fc.nat()).map(([text, at]) => text.slice(0, at % Math.max(text.length, 1))),
  fc.constantFrom('{"orders":[]}', '"[]"', "[] []", ""),
);
const cuts = fc.array(fc.nat({ max: 2000 }), { maxLength: 10 });

describe("the streaming list judge", () => {
  test("gives the verdicts of judging the whole body, however the body is cut into chunks", () => {
    fc.assert(
      fc.property(
        fc.oneof({ weight: 4, arbitrary: list }, { weight: 1, arbitrary: broken }),
        cuts,
        (text, pieces) => {
          const bytes = Buffer.from(text, "utf8");
          const inPieces = judgeInPieces(bytes, pieces);
          assert.deepEqual(summary(inPieces), wholeBodyVerdict(text));
          // The bytes a report shows around the first order at fault do not depend on the cuts either.
          assert.deepEqual(inPieces.excerpt, judgeInPieces(bytes, []).excerpt);
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("orders read from their bytes get the verdicts, digests and kept records of orders read as objects", () => {
    assert.ok(orderPlan, "the Order schema is simple enough to be judged from bytes");
    fc.assert(
      fc.property(list, cuts, fc.boolean(), (text, pieces, keepAll) => {
        const bytes = Buffer.from(text, "utf8");
        const watch = new Set(["3", "9007199254740993"]);
        const options = { watch, keepRecordsUpTo: keepAll ? 100 : 0 };
        const flat = judgeInPieces(bytes, pieces, { ...options, orderPlan });
        const objects = judgeInPieces(bytes, pieces, options);
        assert.deepEqual(summary(flat), summary(objects));
        assert.deepEqual(flat.invalid, objects.invalid);
        assert.deepEqual(flat.duplicates, objects.duplicates);
        assert.deepEqual(flat.repeats, objects.repeats);
        assert.deepEqual(flat.records, objects.records);
        assert.deepEqual([...flat.orders.ids()], [...objects.orders.ids()]);
        const differences = flat.orders.differences(objects.orders, 10);
        assert.deepEqual(differences.changed, { count: 0, ids: [] });
      }),
      { numRuns: 2000 },
    );
  });

  test("a schema with keywords beyond types and formats is judged by its validator alone", () => {
    const order = contract.document.components.schemas.Order as Record<string, unknown>;
    const properties = order.properties as Record<string, object>;
    assert.equal(flatRecordPlan({ ...order, additionalProperties: false }), undefined);
    assert.equal(
      flatRecordPlan({ ...order, properties: { ...properties, quantity: { type: "integer", minimum: 1 } } }),
      undefined,
    );
    assert.equal(
      flatRecordPlan({ ...order, properties: { ...properties, note: { type: "object" } } }),
      undefined,
    );
    assert.ok(flatRecordPlan({ ...order, required: ["id"] }));
  });

  test("a record's digest ignores field order and sees any change of a value", () => {
    const first = judgeInPieces(
      Buffer.from('[{"id":5,"quantity":2,"shipDate":"2026-11-02T10:00:00Z"},{"id":6,"petId":1}]'),
      [9],
    );
    const reordered = judgeInPieces(
      Buffer.from('[{"shipDate":"2026-11-02T10:00:00Z","quantity":2,"id":5},{"petId":1,"id":6}]'),
      [40],
    );
    const changed = judgeInPieces(
      Buffer.from('[{"id":5,"quantity":3,"shipDate":"2026-11-02T10:00:00Z"},{"id":6,"petId":"1"}]'),
      [],
    );
    assert.ok(first.orders.sameIn(reordered.orders, "5"));
    assert.ok(first.orders.sameIn(reordered.orders, "6"));
    assert.ok(!first.orders.sameIn(changed.orders, "5"));
    assert.ok(!first.orders.sameIn(changed.orders, "6"));
    const differences = first.orders.differences(changed.orders, 10);
    assert.deepEqual(differences.changed, { count: 2, ids: ["5", "6"] });
  });

  test("ids keep every digit, in and out of order, and the largest is known", () => {
    const verdict = judgeInPieces(
      Buffer.from(
        '[{"id":9223372036854775807},{"id":9007199254740993},{"id":-9223372036854775808},{"id":9007199254740992}]',
      ),
      [20, 21],
    );
    assert.deepEqual(
      [...verdict.orders.ids()],
      ["9223372036854775807", "9007199254740993", "-9223372036854775808", "9007199254740992"],
    );
    assert.ok(verdict.orders.has("9007199254740993"));
    assert.ok(!verdict.orders.has("9007199254740994"));
    assert.equal(verdict.orders.largest, 9223372036854775807n);
  });
});

describe("a list cut short", () => {
  test("is no array once its root began as anything else, and is one while its root is an array", () => {
    const notArrayRoot = fc.oneof(
      fc.json().filter((text) => !text.trimStart().startsWith("[")),
      fc.constant('{"data":[{"id":1}]}'),
    );
    fc.assert(
      fc.property(fc.oneof(notArrayRoot, list), fc.nat(), cuts, (text, at, pieces) => {
        const bytes = Buffer.from(text);
        const start = bytes.subarray(0, 1 + (at % bytes.length));
        const judge = new ListJudge({ validateOrder, orderPlan });
        let from = 0;
        for (const to of [...pieces.filter((piece) => piece < start.length), start.length].sort(
          (a, b) => a - b,
        )) {
          judge.write(start.subarray(from, to));
          from = to;
        }
        const verdict = judge.endPartial("cut");
        const began = start.toString("latin1").trimStart();
        if (began === "") assert.equal(verdict.notArray, undefined);
        else assert.equal(verdict.notArray !== undefined, !began.startsWith("["), began);
      }),
    );
  });
});

describe("ListJudge watching its watched orders only", () => {
  const watch = new Set(["3", "9007199254740993", "9223372036854775807", "-9223372036854775808"]);

  test("says what the full judge says of the list as a whole and of each watched order", () => {
    fc.assert(
      fc.property(
        fc.oneof({ weight: 4, arbitrary: list }, { weight: 1, arbitrary: broken }),
        cuts,
        (text, pieces) => {
          const bytes = Buffer.from(text, "utf8");
          const full = judgeInPieces(bytes, pieces, { orderPlan, watch });
          const lean = judgeInPieces(bytes, pieces, { orderPlan, watch, watchedOnly: true });
          assert.equal(lean.syntax === undefined, full.syntax === undefined);
          assert.equal(lean.notArray === undefined, full.notArray === undefined);
          assert.equal(lean.count, full.count);
          assert.equal(lean.unindexed, full.unindexed);
          for (const id of watch) {
            assert.equal(lean.orders.has(id), full.orders.has(id), id);
            assert.equal(lean.records.get(id), full.records.get(id), id);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("finds a watched id of any length among others", () => {
    const bigId = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
    fc.assert(
      fc.property(bigId, fc.array(bigId, { maxLength: 5 }), (watched, others) => {
        const listed = [...others, watched].map((id) => `{"id":${id},"petId":1}`).join(",");
        const verdict = judgeInPieces(Buffer.from(`[${listed}]`), [], {
          watch: new Set([watched]),
          watchedOnly: true,
        });
        assert.equal(verdict.records.get(watched), `{"id":${watched},"petId":1}`);
        assert.equal(verdict.unindexed, 0);
      }),
      { numRuns: 2000 },
    );
  });

  test("checks a watched order against the schema, and no other", () => {
    const verdict = judgeInPieces(
      Buffer.from(
        '[{"id":9223372036854775807,"quantity":"2"},{"id":9223372036854775806,"quantity":"2"},{"id":4,"quantity":"2"},{"id":3,"petId":1}]',
      ),
      [],
      { orderPlan, watch: new Set(["9223372036854775807", "3"]), watchedOnly: true },
    );
    assert.equal(verdict.invalid.count, 1);
    assert.match(verdict.invalid.first[0] ?? "", /^orders\[0\] \(id 9223372036854775807\): quantity/);
    assert.equal(verdict.records.get("3"), '{"id":3,"petId":1}');
    assert.equal(verdict.unindexed, 0);
  });

  test("counts an id beyond int64, or no integer, as unindexed, however the list is cut", () => {
    for (const id of ["9223372036854775808", "-9223372036854775809", "12345678901234567890", '"5"', "1.5"]) {
      const bytes = Buffer.from(`[{"id":1},{"id":${id},"petId":1},{"id":2}]`);
      for (const cut of [0, 12, 20]) {
        const verdict = judgeInPieces(bytes, [cut], { watch, watchedOnly: true });
        assert.equal(verdict.unindexed, 1, `${id} cut at ${cut}`);
        assert.equal(verdict.count, 3);
      }
    }
  });
});

describe("ListJudge with a memory account", () => {
  test("an order needing more than the account has left ends the judging there: judged in part, over the memory budget", () => {
    const memory = new MemoryBudget(1024 * 1024);
    const judge = new ListJudge({ validateOrder, orderPlan, memory });
    const wide = Array.from({ length: 200_000 }, (_, field) => `"f${field}":${field}`).join(",");
    const body = Buffer.from(`[{"id":1,"quantity":1},{"id":2,${wide}},{"id":3}]`);
    for (let at = 0; at < body.length; at += 64 * 1024) judge.write(body.subarray(at, at + 64 * 1024));
    const verdict = judge.end();
    assert.match(
      verdict.partial ?? "",
      /^over the memory budget .*: the first 1 orders \(\d+ bytes\) were judged$/,
    );
    assert.equal(verdict.syntax, undefined, "no fault of the text");
    assert.equal(verdict.limit, undefined);
    assert.equal(memory.held, 0, "all given back");
  });

  // Records and repeated ids were kept outside every account: on the judges' thread, sixteen lists of
  // 10,000 orders each kept their records in a heap that grew past the budget.
  test("records kept until the verdict are taken from the account: past its room the list is kept as ids and digests", () => {
    const memory = new MemoryBudget(64 * 1024);
    const judge = new ListJudge({ validateOrder, orderPlan, keepRecordsUpTo: 10_000, memory });
    const orders = Array.from({ length: 1000 }, (_, id) => `{"id":${id},"quantity":"${id}"}`);
    judge.write(Buffer.from(`[${orders.slice(0, 100).join(",")}`));
    assert.ok(memory.held > 100 * 40, `the records kept are held: ${memory.held}`);
    judge.write(Buffer.from(`,${orders.slice(100).join(",")}]`));
    const verdict = judge.end();
    assert.equal(verdict.partial, undefined, "judged whole");
    assert.equal(verdict.count, 1000);
    assert.equal(verdict.invalid.count, 1000);
    assert.equal(verdict.allRecords, false);
    assert.equal(verdict.records.size, 0);
    assert.equal(memory.held, 0, "all given back at the verdict");
  });

  test("ids listed more than once past the account's room end the judging there: judged in part, over the memory budget", () => {
    const memory = new MemoryBudget(64 * 1024);
    const judge = new ListJudge({ validateOrder, orderPlan, memory });
    const twice = Array.from({ length: 4000 }, (_, at) => `{"id":${at >> 1},"quantity":1}`).join(",");
    judge.write(Buffer.from(`[${twice}]`));
    const verdict = judge.end();
    assert.match(
      verdict.partial ?? "",
      /^over the memory budget \(the ids listed more than once needing more memory than the budget has left at byte \d+\): the first \d+ orders \(\d+ bytes\) were judged$/,
    );
    assert.ok(
      verdict.duplicates.count > 100 && verdict.duplicates.count < 2000,
      `${verdict.duplicates.count}`,
    );
    assert.equal(memory.held, 0, "all given back");
  });
});
