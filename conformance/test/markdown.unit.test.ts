import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderMarkdown } from "../reports/markdown.ts";
import type { Report } from "../reports/report.ts";

function suiteReport(target: string, failed: boolean): Report {
  return {
    summary: { passed: 1, failed: failed ? 1 : 0, skipped: 0 },
    target,
    startedAt: "2026-11-25T00:00:00.000Z",
    warnings: [],
    requests: 2,
    retries: 0,
    durationMs: 3,
    scenarios: [
      {
        id: "cancel-race",
        title: "Concurrent cancels",
        status: failed ? "failed" : "passed",
        checks: [
          {
            id: "cancel-race.cancel.one-204",
            status: failed ? "failed" : "passed",
            message: "20 cancels were 204",
            ...(failed ? { reproduce: `curl -sS -X DELETE '${target}/store/orders/1002'` } : {}),
          },
        ],
      },
    ],
  };
}

function proxyReport(): Report {
  return {
    ...suiteReport("http://127.0.0.1:4010/v1 (observed through the proxy)", false),
    coverage: [
      {
        operation: "listOrders",
        method: "GET",
        path: "/store/orders",
        status: 200,
        documented: true,
        seen: 2,
      },
    ],
  };
}

/**
 * The lines after `</details>` that the HTML block it begins swallows as raw HTML: in CommonMark such a
 * block runs until a blank line.
 */
function swallowedAfterDetails(text: string): string[] {
  const lines = text.split("\n");
  const start = lines.indexOf("</details>");
  assert.notEqual(start, -1, "the report has its reproductions");
  const end = lines.findIndex((line, index) => index > start && line.trim() === "");
  return lines.slice(start + 1, end === -1 ? lines.length : end);
}

describe("the Markdown report", () => {
  it("appended after another report, starts as a new block: the earlier one's HTML block ends before it", () => {
    const summary =
      renderMarkdown(suiteReport("http://127.0.0.1:4101/v1", true)) + renderMarkdown(proxyReport());
    assert.deepEqual(swallowedAfterDetails(summary), []);
  });

  it("ends with a blank line and begins with one, passed, failed or observed", () => {
    for (const report of [
      suiteReport("http://127.0.0.1:4101/v1", false),
      suiteReport("http://127.0.0.1:4101/v1", true),
      proxyReport(),
    ]) {
      const markdown = renderMarkdown(report);
      assert.ok(markdown.endsWith("\n\n"), JSON.stringify(markdown.slice(-40)));
      assert.ok(markdown.startsWith("\n"), JSON.stringify(markdown.slice(0, 40)));
    }
  });

  it("shows the target's address whole, as a code span nothing links or mentions from", () => {
    const suite = renderMarkdown(suiteReport("http://127.0.0.1:4101/v1", false));
    assert.match(suite, /\*\*Target:\*\* `http:\/\/127\.0\.0\.1:4101\/v1` · /);
    const proxy = renderMarkdown(proxyReport());
    assert.match(proxy, /\*\*Target:\*\* `http:\/\/127\.0\.0\.1:4010\/v1` \(observed through the proxy\) · /);
    const odd = renderMarkdown(suiteReport("https://www.example.test/@team/v1", false));
    assert.match(odd, /\*\*Target:\*\* `https:\/\/www\.example\.test\/@team\/v1` · /);
  });

  it("lists the checks not judged whole, each with its reason: what keeps the run from a pass", () => {
    const report = suiteReport("http://127.0.0.1:4010/v1", false);
    const scenario = report.scenarios[0];
    assert.ok(scenario);
    scenario.checks.push({
      id: "cancel-race.cancel.listed-once",
      status: "skipped",
      message:
        "not judged: the list has more orders than the 4 whose ids the suite keeps within --max-memory",
      notJudged: true,
    });
    const text = renderMarkdown(report);
    assert.match(text, /^\| Scenario \| Check not judged whole \| Why \|$/m);
    assert.match(
      text,
      /^\| cancel-race \| `cancel-race\.cancel\.listed-once` \| not judged: the list has more orders than the 4 .*--max-memory \|$/m,
    );
    assert.match(text, /conformance: ⚠️ not everything checked$/m);
    assert.doesNotMatch(renderMarkdown(suiteReport("http://127.0.0.1:4010/v1", false)), /not judged whole/);
  });
});
