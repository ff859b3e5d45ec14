import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { XMLParser } from "fast-xml-parser";
import { renderJunit } from "../reports/junit.ts";
import type { Report } from "../reports/report.ts";

function reportWith(notJudged: boolean): Report {
  return {
    summary: { passed: 1, failed: 0, skipped: notJudged ? 1 : 0 },
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
          ...(notJudged
            ? [
                {
                  id: "cancel-pending.pending-order-listed",
                  status: "skipped" as const,
                  message: "not judged: the list has more orders than the suite keeps within --max-memory",
                  notJudged: true as const,
                },
              ]
            : []),
        ],
      },
    ],
  };
}

const parsed = (xml: string) =>
  new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml).testsuites.testsuite;

describe("the JUnit report", () => {
  it("shows a scenario with checks not judged whole as skipped, naming the first, never as passed", () => {
    const suite = parsed(renderJunit(reportWith(true)));
    const scenario = [suite.testcase]
      .flat()
      .find((each: { name: string }) => each.name.startsWith("cancel-pending"));
    assert.equal(
      scenario?.skipped?.message,
      "1 check not judged whole, the first cancel-pending.pending-order-listed (not judged: the list has more orders than the suite keeps within --max-memory)",
    );
    assert.equal(Number(suite.skipped), 1);
    const whole = parsed(renderJunit(reportWith(false)));
    const passed = [whole.testcase]
      .flat()
      .find((each: { name: string }) => each.name.startsWith("cancel-pending"));
    assert.equal(passed?.skipped, undefined);
    assert.equal(Number(whole.skipped), 0);
  });
});
