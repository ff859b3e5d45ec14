import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtInContract } from "../../contract/built-in.ts";
import { judgeListBody } from "../judging/list-judge.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { type ListedOrders, RECORDS_KEPT_UP_TO, TrafficState } from "../proxy/state-rules.ts";

// Exchanges one after the other, each over before the next begins.
const at = (seq: number) => ({ seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 });

/** A list of these ids as the proxy's judge keeps it. */
function listed(ids: readonly number[]): ListedOrders {
  const verdict = judgeListBody(Buffer.from(JSON.stringify(ids.map((id) => ({ id })))), {
    validateOrder: builtInContract().schema("Order"),
    keepRecordsUpTo: RECORDS_KEPT_UP_TO,
  });
  return { index: verdict.orders, records: verdict.records };
}

const list = (state: TrafficState, view: string, ids: readonly number[], seq: number) =>
  state.observe({
    kind: "list",
    view,
    session: "",
    bytes: Buffer.from(String(ids)),
    orders: () => listed(ids),
    at: at(seq),
  });

describe("what the state rules remember stays within its bounds", () => {
  it("keeps each view's last list whole and forgets the least recently used views' lists past the bound", () => {
    const state = new TrafficState({ listedOrders: 9 });
    list(state, "a", [1, 2, 3, 4, 5], 1);
    list(state, "b", [1, 2, 3, 4, 5], 2);
    assert.equal(state.remembered, 5, "a's list went to keep b's within the bound");
    // a's list was forgotten: its order's disappearance is no longer judged; b's still is.
    assert.deepEqual(list(state, "a", [2, 3, 4, 5], 3), []);
    assert.deepEqual(
      list(state, "b", [2, 3, 4, 5], 4).map((finding) => finding.message),
      ["order 1, listed by #2, is missing from #4, and no cancel of it went through the proxy in between"],
    );
  });

  it("forgets the oldest orders a cancel touched in a view first, past the cap", () => {
    // The live history off: it keeps its own stories, within its own budget.
    const state = new TrafficState({ ordersPerView: 3, historyBytes: 0 });
    for (const orderId of ["1", "2", "3", "4", "5"])
      state.observe({ kind: "cancel", view: "k", session: "", orderId, status: 204, at: at(1) });
    assert.equal(state.remembered, 3);
    const again = (orderId: string, seq: number) =>
      state.observe({ kind: "cancel", view: "k", session: "", orderId, status: 204, at: at(seq) });
    assert.deepEqual(again("1", 2), [], "order 1 was forgotten");
    assert.equal(again("5", 3)[0]?.rule, "cancel-once");
  });

  it("flags no order whose cancel the cap forgot: the view's last list goes with it", () => {
    const state = new TrafficState({ ordersPerView: 3 });
    const ids = [1, 2, 3, 4];
    list(state, "k", ids, 1);
    for (const id of ids)
      state.observe({
        kind: "cancel",
        view: "k",
        session: "",
        orderId: String(id),
        status: 204,
        at: at(id + 1),
      });
    assert.deepEqual(list(state, "k", [], 10), []);
    assert.equal(state.notes.get("orders-forgotten")?.count, 1);
  });

  it("charges the orders a cancel touched to the account, and forgets the oldest when it refuses", () => {
    const account = new MemoryBudget(64 * 1024);
    const state = new TrafficState({ historyBytes: 0 }, account);
    const cancel = (view: string, orderId: string, seq: number) =>
      state.observe({ kind: "cancel", view, session: view, orderId, status: 404, at: at(seq) });
    for (let order = 1; order <= 100; order++) cancel("a", String(1_000_000_000 + order), order);
    assert.ok(account.held >= 100 * 192, `${account.held} bytes held for 100 orders`);
    for (let order = 101; order <= 5000; order++)
      cancel(`s${order % 7}`, String(1_000_000_000 + order), order);
    assert.ok(account.held <= account.limit, `${account.held} bytes held`);
    assert.ok(state.remembered < 5000);
    assert.ok((state.notes.get("orders-forgotten")?.count ?? 0) > 0);
    // Forgetting a view gives its orders' bytes back.
    const roomy = new MemoryBudget(1 << 20);
    const few = new TrafficState({ views: 1, historyBytes: 0 }, roomy);
    few.observe({ kind: "cancel", view: "x", session: "", orderId: "1", status: 404, at: at(1) });
    const one = roomy.held;
    few.observe({ kind: "cancel", view: "y", session: "", orderId: "1", status: 404, at: at(2) });
    assert.equal(roomy.held, one);
  });

  it("counts a same list again kept that making room for its stories forgot", () => {
    const account = new MemoryBudget(1 << 20);
    const state = new TrafficState({}, account);
    list(state, "k", [1, 2], 1);
    // The cancel is still being answered while the next list is: that list says something new later.
    state.observe({
      kind: "cancel",
      view: "k",
      session: "",
      orderId: "1",
      status: 204,
      at: { seq: 2, label: "#2", startedAt: 20, endedAt: 40 },
    });
    state.observe({
      kind: "list",
      view: "k",
      session: "",
      bytes: Buffer.from(String([1, 2])),
      orders: () => listed([1, 2]),
      at: { seq: 3, label: "#3", startedAt: 30, endedAt: 35 },
    });
    const other = account.limit - account.held + 1;
    account.take(other);
    list(state, "k", [1, 2], 5);
    account.give(other);
    list(state, "k", [2], 6);
    assert.equal(state.remembered, 2, "order 2 listed, order 1 cancelled");
  });

  it("forgets the least recently used view first, past the cap", () => {
    const state = new TrafficState({ views: 2, historyBytes: 0 });
    for (const view of ["a", "b", "c"]) {
      state.observe({ kind: "cancel", view, session: "", orderId: "7", status: 204, at: at(1) });
    }
    assert.equal(state.remembered, 2);
    // View "a" was forgotten, so its second cancel is not known to be one; "c"'s is.
    assert.deepEqual(
      state.observe({ kind: "cancel", view: "a", session: "", orderId: "7", status: 204, at: at(2) }),
      [],
    );
    assert.equal(
      state.observe({ kind: "cancel", view: "c", session: "", orderId: "7", status: 204, at: at(3) })[0]
        ?.rule,
      "cancel-once",
    );
  });

  it("a list the same as the view's last one, with nothing done since, is not compared again", () => {
    const state = new TrafficState();
    let reads = 0;
    const orders = () => {
      reads++;
      return listed([1]);
    };
    for (let seq = 1; seq <= 3; seq++)
      state.observe({ kind: "list", view: "k", session: "", bytes: Buffer.from("[1]"), orders, at: at(seq) });
    assert.equal(reads, 1);
    state.observe({ kind: "cancel", view: "k", session: "", orderId: "1", status: 204, at: at(4) });
    state.observe({ kind: "list", view: "k", session: "", bytes: Buffer.from("[1]"), orders, at: at(5) });
    assert.equal(reads, 2, "a cancel since the last list makes the next one compared");
    assert.equal(state.evaluations["cancel-leaves-fields"], 1);
  });

  it("a long run of distinct keys keeps at most the lists of the views remembered", () => {
    const state = new TrafficState({ views: 10 });
    const ids = Array.from({ length: 200 }, (_, id) => id + 1);
    for (let key = 0; key < 1000; key++) list(state, `key-${key}`, ids, key);
    assert.equal(state.remembered, 10 * 200);
  });

  it("reads concurrent exchanges in no order: a 409 answered while the 204 was still in flight is no finding", () => {
    const state = new TrafficState();
    const exchange = (seq: number, startedAt: number, endedAt: number) => ({
      seq,
      label: `#${seq}`,
      startedAt,
      endedAt,
    });
    const cancel = (status: number, at: ReturnType<typeof exchange>) =>
      state.observe({ kind: "cancel", view: "k", session: "", orderId: "9", status, at });
    // Two cancels sent together: the upstream took the first, and the second's 409 came back first.
    assert.deepEqual(cancel(409, exchange(2, 1, 5)), []);
    assert.deepEqual(cancel(204, exchange(1, 0, 10)), []);
    // A 204 sent after that 409 was answered is one.
    assert.equal(cancel(204, exchange(3, 20, 25))[0]?.rule, "cancel-once");
  });
});

describe("what lists of huge records cost the state rules", () => {
  const hugeList = (ids: readonly number[], fieldChars: number): ListedOrders => {
    const body = JSON.stringify(ids.map((id) => ({ id, shipDate: "x".repeat(fieldChars) })));
    const verdict = judgeListBody(Buffer.from(body), {
      validateOrder: builtInContract().schema("Order"),
      keepRecordsUpTo: RECORDS_KEPT_UP_TO,
    });
    return { index: verdict.orders, records: verdict.records };
  };

  it("a list of a few orders with megabytes of text each keeps ids and digests, not records", () => {
    const kept = hugeList([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 1024 * 1024);
    assert.equal(kept.index.size, 10);
    assert.equal(kept.records?.size, 0, "ten records of 1 MiB are past the judge's 4 Mi characters");
    assert.equal(hugeList([1, 2], 1024).records?.size, 2, "small records are kept as before");
  });

  it("what all views' last lists hold stays within keptBytes, the least recently used going first", () => {
    const limit = 4 * 1024 * 1024;
    const state = new TrafficState({ keptBytes: limit });
    for (let view = 0; view < 40; view++) {
      state.observe({
        kind: "list",
        view: `key-${view}`,
        session: "",
        bytes: Buffer.alloc(512 * 1024, 0x20),
        orders: () => hugeList([1, 2, 3], 100_000),
        at: at(view + 1),
      });
      assert.ok(state.keptBytes <= limit, `${state.keptBytes} bytes kept after ${view + 1} views`);
    }
    assert.ok(state.keptBytes > 0, "the latest views' lists are still kept");
  });

  it("a list larger than the whole bound alone is kept without records, then not at all, saying so", () => {
    const state = new TrafficState({ keptBytes: 64 * 1024 });
    const ids = Array.from({ length: 1000 }, (_, id) => id + 1);
    list(state, "a", ids, 1);
    assert.ok(state.keptBytes <= 64 * 1024);
    const twice = Array.from({ length: 5000 }, (_, id) => id + 1);
    list(state, "a", twice, 2);
    assert.equal(state.keptBytes, 0);
    assert.match([...state.notes.values()].map((note) => note.message).join("\n"), /judged but not kept/);
  });
});
