import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { type PiecedBody, wholeBytes } from "../core/exchange.ts";
import { MAX_PAGE_SCAN } from "../core/order-page.ts";
import { cancelTransition } from "../core/order-status.ts";
import { createSeed } from "../core/seed.ts";
import { createStore as storeOn } from "../core/store.ts";

const createStore = (orders: Parameters<typeof createSeed>[0]) => storeOn(createSeed(orders));
const text = (body: Uint8Array | PiecedBody) => new TextDecoder().decode(wholeBytes(body));

const seed = () => [
  {
    record: { id: 1n, petId: 7n, quantity: 2n, shipDate: "2026-11-02T10:00:00Z", complete: false },
    status: "pending" as const,
  },
  { record: { id: 9007199254740993n }, status: "shipped" as const },
  { record: { id: 3n, complete: true }, status: "cancelled" as const },
];

describe("store", () => {
  it("follows the cancel rule: only pending orders can be cancelled", () => {
    assert.deepEqual(cancelTransition("pending"), { outcome: "cancelled", next: "cancelled" });
    assert.deepEqual(cancelTransition("shipped"), { outcome: "not_cancellable", next: "shipped" });
    assert.deepEqual(cancelTransition("cancelled"), { outcome: "not_cancellable", next: "cancelled" });
  });

  it("remembers a cancel and refuses the second", () => {
    const store = createStore(seed());
    assert.equal(store.cancel(1n), "cancelled");
    assert.equal(store.statusOf(1n), "cancelled");
    assert.equal(store.cancel(1n), "not_cancellable");
    assert.equal(store.cancel(9007199254740993n), "not_cancellable");
    assert.equal(store.statusOf(9007199254740993n), "shipped");
    assert.equal(store.cancel(9007199254740992n), "not_found");
  });

  it("writes the list exactly, in seed order, without status", () => {
    const store = createStore(seed());
    assert.equal(
      text(store.listBody()),
      '[{"id":1,"petId":7,"quantity":2,"shipDate":"2026-11-02T10:00:00Z","complete":false},{"id":9007199254740993},{"id":3,"complete":true}]',
    );
  });

  it("serves the seed's own list body while only statuses change", () => {
    const store = createStore(seed());
    const first = store.listBody();
    assert.equal(store.listBody(), first);
    store.cancel(2n);
    store.cancel(9007199254740993n);
    store.cancel(1n);
    assert.equal(store.listBody(), first, "a cancelled order stays listed, and the body is shared");
  });

  it("keeps stores independent", () => {
    const a = createStore(seed());
    const b = createStore(seed());
    a.cancel(1n);
    assert.equal(b.statusOf(1n), "pending");
  });

  it("refuses duplicate ids", () => {
    assert.throws(
      () => createStore([...seed(), { record: { id: 1n }, status: "pending" }]),
      /duplicate order id 1/,
    );
  });
  it("pages keyed by id skip no order that stays, whatever is removed, added or changed between pages", () => {
    const change = fc.oneof(
      fc.record({ kind: fc.constant("remove" as const), id: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ kind: fc.constant("cancel" as const), id: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ kind: fc.constant("replace" as const), id: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ kind: fc.constant("add" as const) }),
    );
    const run = fc.record({
      seedSize: fc.integer({ min: 0, max: 30 }),
      limit: fc.integer({ min: 1, max: 6 }),
      status: fc.constantFrom(undefined, "pending" as const),
      between: fc.array(fc.array(change, { maxLength: 4 }), { maxLength: 40 }),
    });
    fc.assert(
      fc.property(run, ({ seedSize, limit, status, between }) => {
        const store = createStore(
          Array.from({ length: seedSize }, (_, index) => ({
            record: { id: BigInt(index + 1) },
            status: "pending" as const,
          })),
        );
        // Ids added here are new each time: an order added again after a removal moves to the end.
        let nextAdded = 1_000;
        for (let index = 0; index < 5; index++)
          store.putOrder({ record: { id: BigInt(nextAdded++) }, status: "pending" });
        const before = [
          ...Array.from({ length: seedSize }, (_, index) => String(index + 1)),
          ...["1000", "1001", "1002", "1003", "1004"],
        ];
        const touched = new Set<string>();
        const seen: string[] = [];
        let after: string | undefined;
        for (let step = 0; ; step++) {
          const page = store.page({
            limit,
            ...(after !== undefined ? { after } : {}),
            ...(status ? { status } : {}),
          });
          assert.ok(page, `the cursor ${after} is known`);
          seen.push(...page.orders.map((order) => order.key));
          if (page.next === undefined) break;
          after = page.next;
          for (const next of between[step] ?? []) {
            if (next.kind === "add")
              store.putOrder({ record: { id: BigInt(nextAdded++) }, status: "pending" });
            else {
              const id = BigInt(next.id);
              touched.add(String(id));
              if (next.kind === "remove") store.removeOrder(id);
              else if (next.kind === "cancel") store.cancel(id);
              else store.setStatus(id, "pending");
            }
          }
          assert.ok(step < 500, "paging ends");
        }
        const stayed = before.filter((key) => !touched.has(key));
        assert.deepEqual(
          seen.filter((key) => stayed.includes(key)),
          stayed,
          "every order that stayed, once, in list order",
        );
        assert.equal(new Set(seen).size, seen.length, "no order twice");
      }),
      { numRuns: 300 },
    );
  });

  it("a page that a filter leaves empty ends at the scan's bound with a cursor that goes on from there", () => {
    const size = MAX_PAGE_SCAN + 10;
    const store = createStore(
      Array.from({ length: size }, (_, index) => ({
        record: { id: BigInt(index + 1) },
        status: "shipped" as const,
      })),
    );
    store.cancel(BigInt(size));
    assert.equal(store.setStatus(BigInt(size), "pending"), true);
    const first = store.page({ limit: 10, status: "pending" });
    assert.deepEqual([first?.orders.length, first?.next], [0, String(MAX_PAGE_SCAN)]);
    const second = store.page({ limit: 10, status: "pending", after: first?.next as string });
    assert.deepEqual([second?.orders.map((order) => order.key), second?.next], [[String(size)], undefined]);
  });

  it("a world at its bound holds no more than it with its list made, however wide its orders", () => {
    const maxBytes = 4 * 1024 * 1024;
    // The widest a control request makes (its body is at most 16 KiB), in one-byte and in three-byte characters.
    for (const character of ["0", "\u20ac"]) {
      const wide = `2026-11-02T10:00:00.${character.repeat(5_000)}Z`;
      const store = createStore(seed());
      let next = 1_000n;
      const order = () => ({ record: { id: next++, shipDate: wide }, status: "pending" as const });
      while (store.putOrder(order(), maxBytes) !== "full");
      assert.equal(store.createOrders([order()], maxBytes), "full");
      assert.ok(store.size > 50, `${store.size} orders`);
      text(store.listBody());
      // What its list's last buffer has not filled yet, at most, beside what the orders reserved.
      const slack = 256 * 1024;
      assert.ok(store.heldBytes <= maxBytes + slack, `${store.heldBytes} bytes held, ${maxBytes} allowed`);
    }
  });

  it("holds what it has now, not its history: adding and removing the same ids again and again", () => {
    const store = createStore(seed());
    const ids = Array.from({ length: 100 }, (_, index) => BigInt(1_000 + index));
    const round = () => {
      for (const id of ids) store.putOrder({ record: { id }, status: "pending" });
      for (const id of ids) store.removeOrder(id);
    };
    for (let done = 0; done < 50; done++) round();
    const early = store.heldBytes;
    for (let done = 0; done < 5_000; done++) round();
    assert.equal(store.size, 3);
    assert.ok(
      store.heldBytes <= Math.max(early, 512 * 1024),
      `held ${store.heldBytes} bytes, early ${early}`,
    );
  });

  it("holds what it has now, not its history: new ids added and removed", () => {
    const store = createStore(seed());
    let next = 1_000n;
    for (let done = 0; done < 500_000; done++) {
      store.putOrder({ record: { id: next }, status: "pending" });
      store.removeOrder(next++);
    }
    assert.equal(store.size, 3);
    assert.ok(store.heldBytes <= 512 * 1024, `held ${store.heldBytes} bytes`);
  });

  it("pages in list order, every order that stayed once, while removed places are let go", () => {
    const store = createStore(seed());
    const stayed = ["1", "9007199254740993", "3"];
    for (let id = 1_000n; id < 1_200n; id++) {
      store.putOrder({ record: { id }, status: "pending" });
      stayed.push(String(id));
    }
    let churned = 5_000n;
    const churn = (times: number) => {
      for (let done = 0; done < times; done++) {
        store.putOrder({ record: { id: churned }, status: "pending" });
        store.removeOrder(churned++);
      }
    };
    churn(210);
    const seen: string[] = [];
    let after: string | undefined;
    for (let step = 0; step < 1_000; step++) {
      const page = store.page({ limit: 7, ...(after !== undefined ? { after } : {}) });
      assert.ok(page, `the cursor ${after} is known`);
      seen.push(...page.orders.map((order) => order.key));
      if (page.next === undefined) break;
      after = page.next;
      churn(3);
    }
    assert.deepEqual(seen, stayed);
    const last = store.page({ limit: 1, after: "1199" });
    assert.deepEqual(last?.orders, []);
  });
});
