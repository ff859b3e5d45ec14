import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { builtInContract } from "../../contract/built-in.ts";
import { IdenticalReadings } from "../judging/identical-readings.ts";
import { ListJudge, type ListVerdict } from "../judging/list-judge.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";

const contract = builtInContract();
const options = { validateOrder: contract.schema("Order"), orderPlan: contract.flatPlan("Order") };

function order(id: number, quantity = 1): string {
  return `{"id":${id},"petId":7,"quantity":${quantity},"shipDate":"2026-11-02T10:00:00Z","complete":false}`;
}

function list(count: number, change?: { at: number; quantity: number | string }): Uint8Array {
  const orders = Array.from({ length: count }, (_, index) =>
    change?.at === index
      ? order(index + 1).replace('"quantity":1', `"quantity":${change.quantity}`)
      : order(index + 1),
  );
  return new TextEncoder().encode(`[${orders.join(",")}]`);
}

/** Reads a body in the given chunk sizes (cycled), counting the judges made. */
function read(
  readings: IdenticalReadings,
  body: Uint8Array,
  sizes: readonly number[],
  made: { judges: number },
) {
  const reading = readings.reading(() => {
    made.judges++;
    return new ListJudge(options);
  });
  let at = 0;
  for (let turn = 0; at < body.length; turn++) {
    const size = sizes[turn % sizes.length] as number;
    reading.write(body.subarray(at, at + size));
    at += size;
  }
  return reading.end();
}

function summary(verdict: ListVerdict) {
  return {
    bytes: verdict.bytes,
    count: verdict.count,
    syntax: verdict.syntax,
    invalid: verdict.invalid,
    duplicates: verdict.duplicates,
    ids: [...verdict.orders.ids()],
  };
}

describe("readings of the list judged once per distinct body", () => {
  it("a body the same as one judged takes its verdict, however it is cut into chunks", () => {
    const readings = new IdenticalReadings(new MemoryBudget(1 << 30));
    const made = { judges: 0 };
    const body = list(20_000);
    const first = read(readings, body, [65_536], made);
    const second = read(readings, body, [1, 7_000, 100_003], made);
    assert.equal(made.judges, 1);
    assert.equal(second, first);
    assert.equal(second.count, 20_000);
  });

  it("a body that differs anywhere, or is longer or shorter, is judged on its own bytes", () => {
    const body = list(20_000);
    for (const other of [
      list(20_000, { at: 0, quantity: '"x"' }),
      list(20_000, { at: 10_000, quantity: 2 }),
      list(20_000, { at: 19_999, quantity: '"x"' }),
      list(19_999),
      list(20_001),
      body.subarray(0, body.length - 1),
    ]) {
      const readings = new IdenticalReadings(new MemoryBudget(1 << 30));
      const made = { judges: 0 };
      read(readings, body, [65_536], made);
      const verdict = read(readings, other, [65_536], made);
      assert.equal(made.judges, 2);
      const alone = new ListJudge(options);
      alone.write(other);
      assert.deepEqual(summary(verdict), summary(alone.end()));
    }
  });

  it("holds no more than its account, gives it all back, and a body past the account is judged as it streams", () => {
    const account = new MemoryBudget(100_000);
    let most = 0;
    const watched = new Proxy(account, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          most = Math.max(most, target.held);
          return result;
        };
      },
    });
    const readings = new IdenticalReadings(watched);
    const made = { judges: 0 };
    const small = list(500);
    const big = list(20_000);
    read(readings, small, [4_096], made);
    read(readings, small, [4_096], made);
    assert.equal(made.judges, 1, "the small body is held whole and found the same");
    read(readings, big, [4_096], made);
    const verdict = read(readings, big, [4_096], made);
    assert.equal(made.judges, 3, "the big body does not fit: judged again as it streams");
    assert.equal(verdict.count, 20_000);
    assert.ok(most <= 100_000, `held ${most} bytes at most`);
    assert.equal(account.held, 0);
  });

  it("a reading abandoned half-way (a cut body) gives back what it held", () => {
    const account = new MemoryBudget(1 << 30);
    const readings = new IdenticalReadings(account);
    const body = list(20_000);
    read(readings, body, [65_536], { judges: 0 });
    const cut = readings.reading(() => new ListJudge(options));
    cut.write(body.subarray(0, 100_000));
    assert.equal(account.held, 100_000, "held while the same as the body judged");
    cut.abandon();
    assert.equal(account.held, 0);
  });

  it("gives every body the verdict a judge of its own gives, whatever came before (property)", () => {
    const change = fc.option(
      fc.record({ at: fc.nat(40), quantity: fc.constantFrom<number | string>(2, '"x"', "1.5") }),
      { nil: undefined },
    );
    const body = fc.tuple(fc.integer({ min: 0, max: 40 }), change).map(([count, edit]) => list(count, edit));
    fc.assert(
      fc.property(
        fc.array(body, { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 1, max: 300 }),
        (bodies, sizes, room, blockBytes) => {
          const account = new MemoryBudget(room);
          const readings = new IdenticalReadings(account, blockBytes);
          for (const each of bodies) {
            const verdict = read(readings, each, sizes, { judges: 0 });
            const alone = new ListJudge(options);
            alone.write(each);
            assert.deepEqual(summary(verdict), summary(alone.end()));
          }
          assert.equal(account.held, 0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
