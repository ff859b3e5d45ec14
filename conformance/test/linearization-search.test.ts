import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { History } from "../model/history.ts";
import { searchOrder } from "../model/linearization-search.ts";
import { ALL_RUN_CHOICES, type RunChoices } from "../model/spec-model.ts";
import { orderExplainedByBruteForce } from "./brute-force-linearizability.ts";
import { modelRun, ORDER_IDS, smallHistory } from "./generated-histories.ts";

const STAYS_409: RunChoices = { cancelledOrdersListed: true, secondCancelStatus: 409 };
const LEAVES_409: RunChoices = { cancelledOrdersListed: false, secondCancelStatus: 409 };

function given(pending: string[], operations: History["operations"]): History {
  return { given: { pending, shipped: [], missing: [], unknown: [] }, records: ["r"], operations };
}

describe("searchOrder: Wing & Gong's search with Lowe's memoisation", () => {
  it("gives a sequence of every operation when one exists", () => {
    const recorded = given(
      ["7"],
      [
        { op: "list", client: 1, sentAt: 0, answeredAt: 10, status: 200, shown: new Map() },
        { op: "cancel", client: 0, orderId: "7", sentAt: 1, answeredAt: 9, status: 204 },
        { op: "cancel", client: 2, orderId: "7", sentAt: 2, answeredAt: 8, status: 409 },
      ],
    );
    assert.deepEqual(searchOrder(recorded, "7", LEAVES_409), { linearizable: true, sequence: [1, 0, 2] });
  });

  it("gives the longest sequence found when every linearization fails", () => {
    const recorded = given(
      ["7"],
      [
        { op: "cancel", client: 0, orderId: "7", sentAt: 0, answeredAt: 1, status: 204 },
        { op: "cancel", client: 1, orderId: "7", sentAt: 2, answeredAt: 3, status: 204 },
      ],
    );
    assert.deepEqual(searchOrder(recorded, "7", STAYS_409), { linearizable: false, sequence: [0] });
  });

  it("agrees with brute force on every order under every choice", () => {
    const agrees = (recorded: History) => {
      for (const orderId of ORDER_IDS)
        for (const choices of ALL_RUN_CHOICES)
          for (const staleMs of [0, 4]) {
            const found = searchOrder(recorded, orderId, choices, staleMs);
            const expected = orderExplainedByBruteForce(recorded, orderId, choices, staleMs, false);
            assert.equal(found.linearizable, expected || !isGiven(recorded, orderId));
            if (found.linearizable && isGiven(recorded, orderId))
              assert.equal(new Set(found.sequence).size, concerning(recorded, orderId));
          }
    };
    fc.assert(fc.property(fc.oneof(smallHistory, modelRun), agrees), { numRuns: 1500 });
  });
});

function isGiven(recorded: History, orderId: string): boolean {
  const { pending, shipped, missing, unknown } = recorded.given;
  return [...pending, ...shipped, ...missing, ...unknown].includes(orderId);
}

/** The operations projected onto the order: its cancels, and every list read whole. */
function concerning(recorded: History, orderId: string): number {
  return recorded.operations.filter((operation) =>
    operation.op === "cancel"
      ? operation.orderId === orderId
      : operation.status === 200 && operation.shown !== null && operation.answeredAt !== null,
  ).length;
}
