import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderExploreError } from "../explore/report-error.ts";
import { renderExploreMarkdown } from "../explore/report-markdown.ts";
import { renderExplorePretty } from "../explore/report-pretty.ts";
import { recordedResult } from "./explore-recorded-result.ts";

describe("explore's Markdown report", () => {
  it("gives the verdict, the rule broken and the minimal history, and ends with a blank line", () => {
    const text = renderExploreMarkdown(recordedResult());
    assert.match(text, /^### Petstore Store Orders explore: ❌ a finding$/m);
    assert.match(text, /^\| `cancel-once` \| violation: order 9007199254740993: /m, "the rule id once");
    assert.match(
      text,
      /^Minimal history: 3 operations, 2 clients, 1 order; failed 3 of 5 replays \(shrunk from 3 steps of 2 clients, /m,
    );
    assert.match(
      text,
      /<details><summary>Minimal history<\/summary>\n\n```text\n[\s\S]*client 0 [\s\S]*\n```\n\n<\/details>\n\n$/,
    );
  });

  it("says a pass as the suite does, and a run not judged whole with its reasons first", () => {
    const clean = recordedResult({ finding: undefined, ended: "budget" });
    const passed = renderExploreMarkdown(clean);
    assert.match(passed, /^### Petstore Store Orders explore: ✅ nothing found$/m);
    assert.match(passed, /\n\n$/);
    const idless = {
      reason: "some of their orders have no int64 id",
      count: 2,
      limit: false,
      example: "GET /v1/store/orders answered 200: 1 of its 3 orders has no int64 id",
    };
    const coverage = { ...clean.coverage, lists: 3, listsReadWhole: 1 };
    const partial = renderExploreMarkdown({ ...clean, coverage, listsNotJudged: [idless] });
    assert.match(
      partial,
      /^\n> \*\*only 1 of 3 lists were judged /,
      "a blank line first, as every Markdown report",
    );
    assert.match(partial, /^### Petstore Store Orders explore: ⚠️ not everything checked$/m);
    assert.match(
      partial,
      /^\| some of their orders have no int64 id \| 2 \| `GET \/v1\/store\/orders answered 200: 1 of its 3 orders has no int64 id` \|$/m,
    );
  });

  it("has a report for a run that ended in an error, as the other reporters do", () => {
    const error = {
      target: "http://127.0.0.1:1/v1",
      startedAt: "",
      durationMs: 1,
      seed: 3,
      message: "no route",
    };
    const text = renderExploreError(error, "markdown") ?? "";
    assert.match(text, /^\n> \*\*error: no route\*\*\n\n### Petstore Store Orders explore: ❌ error\n/);
    assert.match(text, /\*\*Target:\*\* `[^`]+` ·/, "the target a code span that copies whole");
    assert.match(text, /\n\n$/);
  });

  it("counts steps and clients in words that agree with the number, as the terminal does", () => {
    const result = recordedResult();
    if (result.finding)
      result.finding.original = {
        ...result.finding.original,
        program: [[{ wait: 0, action: { op: "list" } }]],
      };
    assert.match(renderExplorePretty(result, { color: false }), /\(shrunk from 1 step of 1 client, /);
    assert.match(renderExploreMarkdown(result), /\(shrunk from 1 step of 1 client, /);
  });
});
