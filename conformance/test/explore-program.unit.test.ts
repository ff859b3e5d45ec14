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
  withoutOneStep,
} from "../explore/program.ts";

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
});
