import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TrafficState } from "../live/state-rules.ts";

// Exchanges one after the other, each over before the next begins.
const at = (seq: number) => ({ seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 });

describe("what the state rules remember stays within its bounds", () => {
  it("forgets the oldest orders of a view first, past the cap", () => {
    const state = new TrafficState({ ordersPerView: 3 });
    const orders = new Map(["1", "2", "3", "4", "5"].map((id) => [id, `{"id":${id}}`]));
    state.observe({
      kind: "list",
      view: "k",
      session: "",
      bytes: Buffer.from("first"),
      orders: () => orders,
      at: at(1),
    });
    assert.equal(state.remembered, 3);
    // Order 1 was forgotten: its disappearance is no longer judged; order 5's still is.
    const findings = state.observe({
      kind: "list",
      view: "k",
      session: "",
      bytes: Buffer.from("second"),
      orders: () =>
        new Map([
          ["2", '{"id":2}'],
          ["3", '{"id":3}'],
          ["4", '{"id":4}'],
        ]),
      at: at(2),
    });
    assert.deepEqual(
      findings.map((finding) => finding.message),
      ["order 5, listed by #1, is missing from #2, and no cancel of it went through the proxy in between"],
    );
  });

  it("forgets the least recently used view first, past the cap", () => {
    const state = new TrafficState({ views: 2 });
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
      return new Map([["1", '{"id":1}']]);
    };
    for (let seq = 1; seq <= 3; seq++)
      state.observe({ kind: "list", view: "k", session: "", bytes: Buffer.from("[1]"), orders, at: at(seq) });
    assert.equal(reads, 1);
    state.observe({ kind: "cancel", view: "k", session: "", orderId: "1", status: 204, at: at(4) });
    state.observe({ kind: "list", view: "k", session: "", bytes: Buffer.from("[1]"), orders, at: at(5) });
    assert.equal(reads, 2, "a cancel since the last list makes the next one compared");
    assert.equal(state.evaluations["cancel-leaves-fields"], 1);
  });

  it("a long run of distinct keys keeps at most views × orders per view", () => {
    const state = new TrafficState({ views: 10, ordersPerView: 100 });
    for (let key = 0; key < 1000; key++) {
      const orders = new Map(Array.from({ length: 200 }, (_, id) => [String(id), `{"id":${id}}`]));
      state.observe({
        kind: "list",
        view: `key-${key}`,
        session: "",
        bytes: Buffer.from(""),
        orders: () => orders,
        at: at(key),
      });
    }
    assert.equal(state.remembered, 10 * 100);
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
