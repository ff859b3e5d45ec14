import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderExploreJson } from "../explore/report-json.ts";
import { RECORDED_ORDER, recordedResult } from "./explore-recorded-result.ts";

describe("explore's JSON report", () => {
  it("has each order's longest linearization and where every linearization fails", () => {
    const json = JSON.parse(renderExploreJson(recordedResult()));
    assert.deepEqual(json.finding.linearization, [
      {
        orderId: RECORDED_ORDER,
        drawn: true,
        choices: { cancelledOrdersListed: true, secondCancelStatus: 409 },
        start: ["pending"],
        linearizable: false,
        prefix: [
          { operation: 0, op: "list", atMs: 1, after: ["pending"] },
          { operation: 1, op: "cancel", atMs: 10, after: ["cancelled"] },
        ],
        failures: [
          { operation: 1, reason: "a second 204: the order was no longer pending" },
          { operation: 2, reason: "a second 204: the order was no longer pending" },
        ],
      },
    ]);
  });
});
