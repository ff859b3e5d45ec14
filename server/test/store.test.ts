import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type PiecedBody, wholeBytes } from "../core/exchange.ts";
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
});
