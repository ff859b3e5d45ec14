import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ALL_RUN_CHOICES,
  cancelStatusDecides,
  type OrderStatus,
  type RunChoices,
  startingStatuses,
  step,
} from "../model/spec-model.ts";

const STAYS_409: RunChoices = { cancelledOrdersListed: true, secondCancelStatus: 409 };
const LEAVES_404: RunChoices = { cancelledOrdersListed: false, secondCancelStatus: 404 };
const STATUSES: readonly OrderStatus[] = ["pending", "shipped", "cancelled", "absent"];

describe("the spec's model of one order", () => {
  it("cancels a pending order once: 204, then not pending", () => {
    assert.equal(step("pending", { op: "cancel", status: 204 }, STAYS_409), "cancelled");
    for (const status of [404, 409, 500])
      assert.equal(step("pending", { op: "cancel", status }, STAYS_409), null);
  });

  it("answers 409 for a shipped order and 404 for an absent one, changing nothing", () => {
    assert.equal(step("shipped", { op: "cancel", status: 409 }, LEAVES_404), "shipped");
    assert.equal(step("shipped", { op: "cancel", status: 204 }, LEAVES_404), null);
    assert.equal(step("absent", { op: "cancel", status: 404 }, STAYS_409), "absent");
    assert.equal(step("absent", { op: "cancel", status: 409 }, STAYS_409), null);
  });

  it("answers a cancelled order's second cancel as the run decided", () => {
    assert.equal(step("cancelled", { op: "cancel", status: 409 }, STAYS_409), "cancelled");
    assert.equal(step("cancelled", { op: "cancel", status: 404 }, STAYS_409), null);
    assert.equal(step("cancelled", { op: "cancel", status: 404 }, LEAVES_404), "cancelled");
  });

  it("lets a refused key change nothing, whatever the status", () => {
    for (const status of STATUSES)
      for (const choices of ALL_RUN_CHOICES)
        assert.equal(step(status, { op: "cancel", status: 401 }, choices), status);
  });

  it("lists every existing order, and a cancelled one as the run decided", () => {
    for (const choices of ALL_RUN_CHOICES) {
      assert.equal(step("pending", { op: "list", shown: true }, choices), "pending");
      assert.equal(step("shipped", { op: "list", shown: false }, choices), null);
      assert.equal(step("absent", { op: "list", shown: true }, choices), null);
      const cancelledShown = choices.cancelledOrdersListed;
      assert.equal(step("cancelled", { op: "list", shown: cancelledShown }, choices), "cancelled");
      assert.equal(step("cancelled", { op: "list", shown: !cancelledShown }, choices), null);
    }
  });

  it("gives a cancel that did not tell its effect the effect of a cancel", () => {
    assert.equal(step("pending", { op: "cancel-undecided" }, STAYS_409), "cancelled");
    assert.equal(step("shipped", { op: "cancel-undecided" }, STAYS_409), "shipped");
    assert.deepEqual([204, 401, 404, 409, 500, 429, null].map(cancelStatusDecides), [
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it("starts each order as the run was given it, and judges no other id", () => {
    const given = { pending: ["1"], shipped: ["2"], missing: ["3"], unknown: ["4"] };
    assert.deepEqual(startingStatuses("1", given), ["pending"]);
    assert.deepEqual(startingStatuses("2", given), ["shipped"]);
    assert.deepEqual(startingStatuses("3", given), ["absent"]);
    assert.deepEqual(startingStatuses("4", given), ["pending", "shipped", "cancelled"]);
    assert.deepEqual(startingStatuses("5", given), []);
  });
});
