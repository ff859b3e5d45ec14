import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderHtml } from "../reports/html.ts";
import { renderJunit } from "../reports/junit.ts";
import { renderMarkdown } from "../reports/markdown.ts";
import { renderPretty } from "../reports/pretty.ts";
import type { Report } from "../reports/report.ts";

// A state rule that failed once and held elsewhere, as the proxy's ledger reports it: a passed entry and a
// failure under one id.
const REPORT: Report = {
  summary: { passed: 4, failed: 1, skipped: 0 },
  target: "http://127.0.0.1:4010/v1",
  startedAt: "2026-01-01T00:00:00.000Z",
  warnings: [],
  requests: 9,
  retries: 0,
  durationMs: 5,
  scenarios: [
    {
      id: "state",
      title: "The spec's state rules across the traffic",
      status: "failed",
      checks: [
        { id: "state.cancel-once", status: "passed", message: "held 4 times", spec: "§4.2" },
        { id: "state.cancel-once", status: "failed", message: "order 6 was cancelled twice", spec: "§4.2" },
      ],
    },
  ],
};

describe("one check, one line in every report", () => {
  it("a check that failed anywhere is shown once, as failed, with its counts", () => {
    const html = renderHtml(REPORT);
    assert.equal(html.split("<code>state.cancel-once</code>").length - 1, 1, "one line in the HTML");
    assert.match(
      html,
      /class="check failed">.*<code>state\.cancel-once<\/code>: order 6 was cancelled twice \(failed once; held 4 times\)/,
    );

    const pretty = renderPretty(REPORT, { color: false }).split("\n");
    const prettyLines = pretty.filter((line) => line.includes("state.cancel-once"));
    assert.equal(prettyLines.length, 1, prettyLines.join("\n"));
    assert.match(prettyLines[0] ?? "", /✖ .*\(failed once; held 4 times\)/);

    const junit = renderJunit(REPORT);
    assert.equal(junit.split("PASSED state.cancel-once").length - 1, 0);
    assert.equal(junit.split("FAILED state.cancel-once").length - 1, 1);

    const markdown = renderMarkdown(REPORT);
    assert.equal(markdown.split("`state.cancel-once`").length - 1, 1);
  });
});
