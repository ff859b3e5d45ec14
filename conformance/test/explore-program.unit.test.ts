import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  nthProgram,
  type Program,
  programArbitrary,
  slotPlan,
  slotsUsed,
  smallerPrograms,
  stepCount,
  withoutLaterSteps,
  withoutOneStep,
} from "../explore/program.ts";
import type { History, HistoryOperation } from "../model/history.ts";
import type { HistoryFinding } from "../model/linearizability.ts";

const shape = { clients: 8, steps: 6, maxWaitMs: 20, slots: slotPlan(true, true) };

describe("explore's programs", () => {
  it("the same seed gives the same programs, another seed others", () => {
    const arbitrary = programArbitrary(shape);
    const first = [0, 1, 2].map((n) => nthProgram(arbitrary, 11, n));
    assert.deepEqual(
      [0, 1, 2].map((n) => nthProgram(arbitrary, 11, n)),
      first,
    );
    assert.notDeepEqual(
      [0, 1, 2].map((n) => nthProgram(arbitrary, 12, n)),
      first,
    );
  });

  it("programs keep to their shape: clients, steps, slots", () => {
    fc.assert(
      fc.property(programArbitrary(shape), (program) => {
        assert.ok(program.length >= 1 && program.length <= shape.clients);
        for (const lane of program) assert.ok(lane.length >= 1 && lane.length <= shape.steps);
        for (const slot of slotsUsed(program)) assert.ok(slot < shape.slots.kinds.length);
      }),
    );
  });

  it("every smaller candidate is no larger, and removing one step each time covers every step", () => {
    const arbitrary = programArbitrary(shape);
    fc.assert(
      fc.property(arbitrary, (program) => {
        let candidates = 0;
        for (const smaller of smallerPrograms(arbitrary, program)) {
          assert.ok(stepCount(smaller) <= stepCount(program));
          if (++candidates > 50) break;
        }
        const shorter = [...withoutOneStep(program)];
        assert.equal(shorter.length, stepCount(program));
        for (const one of shorter) {
          assert.equal(stepCount(one), stepCount(program) - 1);
          assert.ok(
            one.every((lane) => lane.length > 0),
            "an emptied lane is dropped",
          );
        }
      }),
      { numRuns: 50 },
    );
  });

  it("slots are pending first, then shipped and missing when the run has them", () => {
    assert.deepEqual(slotPlan(false, false).kinds, ["pending", "pending", "pending", "pending"]);
    assert.deepEqual(slotPlan(true, true).kinds.slice(4), ["shipped", "missing"]);
    const program: Program = [
      [{ wait: 0, action: { op: "cancel", slot: 3 } }],
      [
        { wait: 1, action: { op: "list" } },
        { wait: 0, action: { op: "cancel", slot: 0 } },
      ],
    ];
    assert.deepEqual(slotsUsed(program), [0, 3]);
  });

  it("without the steps sent after the failing operations were answered, past a cancel never sent", () => {
    const list = { wait: 0, action: { op: "list" as const } };
    const cancel = (slot: number) => ({ wait: 0, action: { op: "cancel" as const, slot } });
    // Client 0's cancel of slot 4 had no order, so it was not sent: its list is its first operation.
    const program: Program = [
      [cancel(4), list, list],
      [cancel(0), cancel(0), list],
    ];
    const op = (client: number, sentAt: number, orderId?: string): HistoryOperation =>
      orderId === undefined
        ? { op: "list", client, sentAt, answeredAt: sentAt + 1, status: 200, shown: new Map() }
        : { op: "cancel", client, orderId, sentAt, answeredAt: sentAt + 1, status: 204 };
    const operations = [op(1, 0, "10"), op(0, 1), op(1, 2, "10"), op(0, 5), op(1, 6)];
    const history = {
      given: { pending: ["10"], shipped: [], missing: [], unknown: [] },
      records: [],
      operations,
    };
    const twoCancels = { operations: [0, 2] } as unknown as HistoryFinding;
    assert.deepEqual(withoutLaterSteps(program, history as History, [twoCancels]), [
      [cancel(4), list],
      [cancel(0), cancel(0)],
    ]);
    const unanswered = {
      ...history,
      operations: operations.map((one, at) => (at === 2 ? { ...one, answeredAt: null } : one)),
    };
    assert.equal(withoutLaterSteps(program, unanswered as History, [twoCancels]), undefined);
    const lastOne = { operations: [4] } as unknown as HistoryFinding;
    assert.equal(withoutLaterSteps(program, history as History, [lastOne]), undefined);
  });
});
