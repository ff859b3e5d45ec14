import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderPretty } from "../reports/pretty.ts";
import { reportOfOneScenario } from "./report-fixtures.ts";

const report = reportOfOneScenario(true);

describe("the pretty report", () => {
  it("marks a scenario with checks not judged whole as not passed, and says how many", () => {
    const text = renderPretty(report, { color: false });
    assert.match(text, /^- cancel-pending {2}Cancel a pending order \(2 checks, 1 not judged whole\)$/m);
    assert.doesNotMatch(text, /^✔ cancel-pending/m);
  });
});
