import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderHtml } from "../reports/html.ts";
import type { Report } from "../reports/report.ts";
import { reportOfOneScenario } from "./report-fixtures.ts";

function reportWith(passed: number, failed: number): Report {
  return {
    summary: { passed, failed, skipped: 0 },
    target: "http://127.0.0.1:4010/v1",
    startedAt: "2026-11-25T00:00:00.000Z",
    warnings: [],
    requests: 1,
    retries: 0,
    durationMs: 1,
    scenarios: [],
  };
}

/** The summary's Checks line, as the page shows it. */
function checksLine(html: string): string {
  return /<dt>Checks<\/dt><dd>(.*?)<\/dd>/.exec(html)?.[1] ?? "";
}

describe("the HTML report's summary", () => {
  it("colours a count only when there is any: a pass shows no red", () => {
    const line = checksLine(renderHtml(reportWith(5, 0)));
    assert.equal(line, '<span class="passed">5 passed</span>, 0 failed, 0 skipped');
    assert.doesNotMatch(renderHtml(reportWith(5, 0)), /class="failed"/);
  });

  it("shows failures in red, and no passes in green", () => {
    assert.equal(
      checksLine(renderHtml(reportWith(0, 2))),
      '0 passed, <span class="failed">2 failed</span>, 0 skipped',
    );
  });

  it("opens a scenario with checks not judged whole, not green, and keeps it with the failures", () => {
    const report = reportOfOneScenario(true);
    const html = renderHtml(report);
    assert.match(
      html,
      /<section class="scenario passed not-whole" aria-label="cancel-pending: not judged whole">\n<details open><summary><span class="mark" aria-hidden="true">–<\/span> <strong>cancel-pending<\/strong> .*\(1 check passed, 1 not judged whole\)/,
    );
    assert.match(html, /<li class="check skipped not-judged"><details open>/);
    assert.match(html, /\.failures-only \.scenario:not\(\.failed\):not\(\.not-whole\)/);
  });
});
