import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtInContract } from "../../contract/built-in.ts";
import { judgeListBody } from "../judging/list-judge.ts";
import { refusalsChangeNothing } from "../proxy/state-rules/refusals-change-nothing.ts";
import { HOLDS, type OrderChange } from "../proxy/state-rules/traffic-rule.ts";
import { RECORDS_KEPT_UP_TO, type StateFinding, TrafficState } from "../proxy/state-rules.ts";

const at = (seq: number) => ({ seq, label: `#${seq}`, startedAt: seq * 10, endedAt: seq * 10 + 5 });
const change = (fields: Partial<OrderChange>): OrderChange => ({
  kind: "changed",
  id: "3",
  earlier: at(1),
  later: at(4),
  order: undefined,
  refusedBetween: at(2),
  cancelInFlight: () => false,
  records: () => "{} (#1), then {} (#4)",
  ...fields,
});

describe("refusals-change-nothing", () => {
  it("is tested by each order refused between two lists that the earlier one listed", () => {
    const touched = { id: "3", refusedBetween: at(2), inEarlier: true, inLater: false };
    assert.equal(refusalsChangeNothing.onOrderTouchedBetween?.(touched), HOLDS);
    assert.equal(refusalsChangeNothing.onOrderTouchedBetween?.({ ...touched, inEarlier: false }), undefined);
    assert.equal(
      refusalsChangeNothing.onOrderTouchedBetween?.({
        id: "3",
        cancelledBetween: at(2),
        inEarlier: true,
        inLater: true,
      }),
      undefined,
    );
  });

  it("finds a refused order changed or gone, from the refusal to the later list", () => {
    assert.deepEqual(refusalsChangeNothing.onOrderChange?.(change({})), {
      message: "order 3 changed after the refused #2: {} (#1), then {} (#4)",
      earlier: at(2),
      later: at(4),
    });
    assert.deepEqual(refusalsChangeNothing.onOrderChange?.(change({ kind: "vanished" })), {
      message: "order 3 is missing from #4 after the refused #2; it was listed by #1",
      earlier: at(2),
      later: at(4),
    });
  });

  it("leaves what a cancel explains to the cancel's rules", () => {
    assert.equal(refusalsChangeNothing.onOrderChange?.(change({ cancelledBetween: at(3) })), undefined);
    const vanished = { kind: "vanished" as const };
    assert.equal(
      refusalsChangeNothing.onOrderChange?.(change({ ...vanished, order: { cancelled: at(3) } })),
      undefined,
    );
    assert.equal(
      refusalsChangeNothing.onOrderChange?.(change({ ...vanished, cancelInFlight: () => true })),
      undefined,
    );
    assert.equal(refusalsChangeNothing.onOrderChange?.(change({ refusedBetween: undefined })), undefined);
  });
});

describe("refusals-change-nothing and an order shipped outside the API", () => {
  it("lets the first 409 explain a change once, from the earlier list's start to the 409's answer", () => {
    const shipped = change({ order: { conflicted: at(2), refused: at(2) } });
    assert.equal(refusalsChangeNothing.onOrderChange?.(shipped), undefined);
    // The 409 overlapped the earlier list: the shipping may still have come after that list began.
    const overlapping = { seq: 2, label: "#2", startedAt: 8, endedAt: 12 };
    assert.equal(
      refusalsChangeNothing.onOrderChange?.(change({ order: { conflicted: overlapping } })),
      undefined,
    );
  });

  it("still finds a change no shipping explains", () => {
    const found = (order: OrderChange["order"], fields: Partial<OrderChange> = {}) =>
      refusalsChangeNothing.onOrderChange?.(change({ order, ...fields }));
    // A 404 or a 401 shows nothing of a shipping.
    assert.ok(found({ refused: at(2) }));
    // The first 409 was answered before the earlier list began: the order was shipped before that list.
    assert.ok(found({ conflicted: at(0) }, { refusedBetween: at(2) }));
    // A 204 said the order was pending, and a cancelled order does not ship.
    assert.ok(found({ conflicted: at(2), cancelled: at(0) }));
  });
});

describe("the state keeper on an order shipped between two lists", () => {
  const validateOrder = builtInContract().schema("Order");
  const pending = { id: 7, petId: 1, quantity: 1, complete: false };
  const shipped = { ...pending, complete: true, shipDate: "2026-11-20T10:00:00Z" };
  const observeList = (state: TrafficState, orders: object[], seq: number): StateFinding[] =>
    state.observe({
      kind: "list",
      view: "k",
      session: "",
      orders: () => {
        const judged = judgeListBody(Buffer.from(JSON.stringify(orders)), {
          validateOrder,
          keepRecordsUpTo: RECORDS_KEPT_UP_TO,
        });
        return { index: judged.orders, records: judged.records };
      },
      at: at(seq),
    });
  const observeCancel = (state: TrafficState, status: number, seq: number): StateFinding[] =>
    state.observe({ kind: "cancel", view: "k", session: "", orderId: "7", status, at: at(seq) });

  it("finds nothing when a list shows it pending, a cancel gets 409, and a later list shows it shipped", () => {
    const state = new TrafficState();
    const found = [
      ...observeList(state, [pending], 1),
      ...observeCancel(state, 409, 2),
      ...observeList(state, [shipped], 3),
    ];
    assert.deepEqual(found, []);
    assert.equal(state.evaluations["refusals-change-nothing"], 1);
  });

  it("finds a change after a list that began once the 409 had shown the order shipped", () => {
    const state = new TrafficState();
    observeList(state, [pending], 1);
    observeCancel(state, 409, 2);
    observeList(state, [pending], 3);
    observeCancel(state, 409, 4);
    const rules = observeList(state, [shipped], 5).map((finding) => finding.rule);
    assert.deepEqual(rules, ["refusals-change-nothing"]);
  });

  it("finds a change across a 409 after a 204 of the order", () => {
    const state = new TrafficState();
    observeList(state, [pending], 1);
    observeCancel(state, 204, 2);
    observeList(state, [pending], 3);
    observeCancel(state, 409, 4);
    const rules = observeList(state, [shipped], 5).map((finding) => finding.rule);
    assert.ok(rules.includes("refusals-change-nothing"), rules.join());
  });
});
