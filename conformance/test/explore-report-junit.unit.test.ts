import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { XMLParser } from "fast-xml-parser";
import { renderExploreJunit } from "../explore/report-junit.ts";
import { recordedResult } from "./explore-recorded-result.ts";

const parser = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === "testcase" });

function suiteOf(xml: string) {
  return parser.parse(xml).testsuites.testsuite as Record<string, unknown> & {
    testcase: Array<Record<string, unknown>>;
  };
}

describe("explore's JUnit report", () => {
  it("has a case saying the run was interrupted, and skips the properties nothing broke", () => {
    const suite = suiteOf(
      renderExploreJunit(
        recordedResult({ ended: "interrupted", interruptedBy: "SIGINT", finding: undefined }),
      ),
    );
    const first = suite.testcase[0] as Record<string, Record<string, string>>;
    assert.equal(first["@_name"], "run: interrupted");
    assert.equal(first.error?.["@_type"], "Interrupted");
    assert.equal(first.error?.["@_message"], "interrupted by SIGINT");
    assert.match(first.error?.["#text"] ?? "", /covered 1 histories.*which is not a pass/);
    const properties = suite.testcase.slice(1);
    assert.ok(properties.length > 0);
    assert.ok(
      properties.every((testcase) => testcase.skipped !== undefined && testcase.failure === undefined),
    );
    assert.equal(suite["@_errors"], "1");
    assert.equal(suite["@_skipped"], String(properties.length));
  });

  it("keeps a finding's failure when shrinking it was interrupted", () => {
    const suite = suiteOf(renderExploreJunit(recordedResult({ interruptedBy: "SIGTERM" })));
    assert.equal(suite.testcase[0]?.["@_name"], "run: interrupted");
    const failed = suite.testcase.filter((testcase) => testcase.failure !== undefined);
    assert.deepEqual(
      failed.map((testcase) => String(testcase["@_name"]).split(":")[0]),
      ["cancel-once"],
    );
  });

  it("has no such case when the run was not interrupted", () => {
    const suite = suiteOf(renderExploreJunit(recordedResult()));
    assert.ok(suite.testcase.every((testcase) => testcase["@_name"] !== "run: interrupted"));
    assert.equal(suite["@_errors"], "0");
    assert.equal(suite["@_skipped"], "0");
  });
});
