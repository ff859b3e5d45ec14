import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderExploreJson } from "../explore/report-json.ts";
import { RECORDED_ORDER, recordedResult } from "./explore-recorded-result.ts";

describe("explore's JSON report", () => {
  it("leads with the outcome its exit code gives, as the suite's and the proxy's do", () => {
    const found = recordedResult();
    assert.deepEqual(JSON.parse(renderExploreJson(found)).outcome, {
      verdict: "failed",
      headline: "a finding",
      reasons: [],
    });
    const { finding: _, ...nothing } = found;
    assert.equal(JSON.parse(renderExploreJson(nothing)).outcome.verdict, "passed");
    const stopped = JSON.parse(renderExploreJson({ ...nothing, interruptedBy: "SIGINT" })).outcome;
    assert.deepEqual(stopped, {
      verdict: "interrupted",
      headline: "interrupted",
      reasons: ["the run was interrupted by SIGINT"],
    });
  });

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
          { operation: 1, reason: "a 204 though the order was no longer pending" },
          { operation: 2, reason: "a 204 though the order was no longer pending" },
        ],
      },
    ]);
  });
});
