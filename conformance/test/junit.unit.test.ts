import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { XMLParser } from "fast-xml-parser";
import { renderJunit } from "../reports/junit.ts";
import { reportOfOneScenario } from "./report-fixtures.ts";

const parsed = (xml: string) =>
  new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml).testsuites.testsuite;

describe("the JUnit report", () => {
  it("shows a scenario with checks not judged whole as skipped, naming the first, never as passed", () => {
    const suite = parsed(renderJunit(reportOfOneScenario(true)));
    const scenario = [suite.testcase]
      .flat()
      .find((each: { name: string }) => each.name.startsWith("cancel-pending"));
    assert.equal(
      scenario?.skipped?.message,
      "1 check not judged whole, the first cancel-pending.pending-order-listed (not judged: the list has more orders than the suite keeps within --max-memory)",
    );
    assert.equal(Number(suite.skipped), 1);
    const whole = parsed(renderJunit(reportOfOneScenario(false)));
    const passed = [whole.testcase]
      .flat()
      .find((each: { name: string }) => each.name.startsWith("cancel-pending"));
    assert.equal(passed?.skipped, undefined);
    assert.equal(Number(whole.skipped), 0);
  });
});
