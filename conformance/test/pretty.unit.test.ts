import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderPretty } from "../reports/pretty.ts";
import type { Report } from "../reports/report.ts";

const report: Report = {
  summary: { passed: 1, failed: 0, skipped: 1 },
  target: "http://127.0.0.1:4010/v1",
  startedAt: "2026-11-27T00:00:00.000Z",
  warnings: [],
  requests: 2,
  retries: 0,
  durationMs: 3,
  scenarios: [
    {
      id: "cancel-pending",
      title: "Cancel a pending order",
      status: "passed",
      checks: [
        { id: "cancel-pending.cancel.status", status: "passed", message: "204" },
        {
          id: "cancel-pending.pending-order-listed",
          status: "skipped",
          message: "not judged: the list has more orders than the suite keeps within --max-memory",
          notJudged: true,
        },
      ],
    },
  ],
};

describe("the pretty report", () => {
  it("marks a scenario with checks not judged whole as not passed, and says how many", () => {
    const text = renderPretty(report, { color: false });
    assert.match(text, /^- cancel-pending {2}Cancel a pending order \(2 checks, 1 not judged whole\)$/m);
    assert.doesNotMatch(text, /^✔ cancel-pending/m);
  });
});
