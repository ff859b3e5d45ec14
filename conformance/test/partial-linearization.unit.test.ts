import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { History, HistoryOperation } from "../model/history.ts";
import { searchOrder } from "../model/linearization-search.ts";
import {
  MAX_DRAWN_OPERATIONS,
  type OrderLinearizationDrawing,
  partialLinearization,
} from "../model/partial-linearization.ts";
import { ALL_RUN_CHOICES, cancelStatusDecides, type RunChoices } from "../model/spec-model.ts";
import { modelRun, ORDER_IDS, smallHistory } from "./generated-histories.ts";

const STAYS_409: RunChoices = { cancelledOrdersListed: true, secondCancelStatus: 409 };
const LEAVES_409: RunChoices = { cancelledOrdersListed: false, secondCancelStatus: 409 };

function pendingOrder(operations: HistoryOperation[]): History {
  return { given: { pending: ["7"], shipped: [], missing: [], unknown: [] }, records: ["r"], operations };
}

function cancel(client: number, sentAt: number, answeredAt: number | null, status: number | null) {
  return { op: "cancel" as const, client, orderId: "7", sentAt, answeredAt, status };
}

function list(client: number, sentAt: number, answeredAt: number, shows: boolean) {
  return {
    op: "list" as const,
    client,
    sentAt,
    answeredAt,
    status: 200,
    shown: new Map(shows ? [["7", 0]] : []),
  };
}

function drawn(drawing: OrderLinearizationDrawing) {
  assert.ok(drawing.drawn, "drawn");
  return drawing;
}

describe("partialLinearization: where every linearization of an order fails", () => {
  it("stops a second 204 after the first, with the status before it", () => {
    const history = pendingOrder([cancel(0, 0, 1, 204), cancel(1, 2, 3, 204)]);
    const drawing = drawn(partialLinearization(history, "7", STAYS_409));
    assert.equal(drawing.linearizable, false);
    assert.deepEqual(drawing.start, ["pending"]);
    assert.deepEqual(drawing.prefix, [{ operation: 0, atMs: 0, after: ["cancelled"] }]);
    assert.deepEqual(drawing.failures, [
      { operation: 1, reason: "a 204 though the order was no longer pending" },
    ]);
  });

  it("names both of two overlapping 204s, since either may come first", () => {
    const history = pendingOrder([cancel(0, 0, 10, 204), cancel(1, 1, 9, 204)]);
    const drawing = drawn(partialLinearization(history, "7", STAYS_409));
    assert.equal(drawing.prefix.length, 1);
    assert.deepEqual(
      drawing.failures.map((failure) => failure.operation),
      [0, 1],
    );
  });

  it("stops a list that began after the cancel was answered and still shows the order", () => {
    const history = pendingOrder([cancel(1, 5.3, 17.3, 204), list(0, 18, 49.8, true)]);
    const drawing = drawn(partialLinearization(history, "7", LEAVES_409));
    assert.deepEqual(
      drawing.prefix.map((step) => [step.operation, step.after]),
      [[0, ["cancelled"]]],
    );
    assert.match(drawing.failures[0]?.reason ?? "", /showed the order after it was cancelled/);
    // Lists allowed to be 20 ms stale may read the order before the cancel: then it fits.
    const stale = drawn(partialLinearization(history, "7", LEAVES_409, 20));
    assert.equal(stale.linearizable, true);
    assert.deepEqual(
      stale.prefix.map((step) => step.operation),
      [1, 0],
    );
  });

  it("stops a pending order's 409 at once, saying it was still pending", () => {
    const drawing = drawn(partialLinearization(pendingOrder([cancel(0, 0, 1, 409)]), "7", STAYS_409));
    assert.deepEqual(drawing.prefix, []);
    assert.match(drawing.failures[0]?.reason ?? "", /a 409 while the order was still pending/);
  });

  it("gives every operation with points within their spans when the order is linearizable", () => {
    const history = pendingOrder([
      list(1, 0, 10, true),
      cancel(0, 1, 9, 204),
      cancel(2, 2, 8, 409),
      cancel(3, 3, null, null),
    ]);
    const drawing = drawn(partialLinearization(history, "7", STAYS_409));
    assert.equal(drawing.linearizable, true);
    assert.deepEqual(drawing.failures, []);
    assert.deepEqual(
      drawing.prefix.map((step) => [step.operation, step.atMs, step.after]),
      [
        [0, 0, ["pending"]],
        [1, 1, ["cancelled"]],
        [2, 2, ["cancelled"]],
        [3, 3, ["cancelled"]],
      ],
    );
  });

  it("gives up past the operations a drawing can show", () => {
    const lists = Array.from({ length: MAX_DRAWN_OPERATIONS + 1 }, (_, at) => list(0, at, at + 0.5, true));
    const drawing = partialLinearization(pendingOrder(lists), "7", STAYS_409);
    assert.deepEqual(drawing, {
      orderId: "7",
      drawn: false,
      reason: `too many operations to draw (${MAX_DRAWN_OPERATIONS + 1}, at most ${MAX_DRAWN_OPERATIONS})`,
    });
  });

  it("agrees with the search, and each failure is refused by the model after a longest prefix", () => {
    const agrees = (recorded: History) => {
      for (const orderId of ORDER_IDS)
        for (const choices of ALL_RUN_CHOICES) {
          const drawing = partialLinearization(recorded, orderId, choices);
          const found = searchOrder(recorded, orderId, choices);
          assert.ok(drawing.drawn);
          assert.equal(drawing.linearizable, found.linearizable);
          assert.equal(drawing.prefix.length, found.sequence.length);
          assert.equal(drawing.failures.length > 0, !found.linearizable);
          let previous = Number.NEGATIVE_INFINITY;
          for (const step of drawing.prefix) {
            const operation = recorded.operations[step.operation] as HistoryOperation;
            assert.ok(step.atMs >= previous && step.atMs >= operation.sentAt);
            // A cancel whose answer does not tell its effect (none, a 5xx) may take it after that answer.
            const open = operation.op === "cancel" && !cancelStatusDecides(operation.status);
            assert.ok(open || step.atMs <= (operation.answeredAt ?? Number.POSITIVE_INFINITY));
            assert.ok(step.after.length > 0);
            previous = step.atMs;
          }
        }
    };
    fc.assert(fc.property(fc.oneof(smallHistory, modelRun), agrees), {
      numRuns: 800,
      examples: [
        // A 500 answered at once, whose effect the list after it shows.
        [
          {
            given: { pending: ["1"], shipped: [], missing: [], unknown: [] },
            records: ["a1"],
            operations: [
              { op: "list", client: 1, sentAt: 0, answeredAt: 1, status: 200, shown: new Map() },
              { op: "list", client: 1, sentAt: 1, answeredAt: 1, status: 200, shown: new Map([["1", 0]]) },
              { op: "cancel", client: 0, orderId: "1", sentAt: 0, answeredAt: 0, status: 500 },
            ],
          },
        ],
      ],
    });
  });
});
