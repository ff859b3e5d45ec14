import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderExploreHtml } from "../explore/report-html.ts";
import { renderExploreJson } from "../explore/report-json.ts";
import { renderExploreJunit } from "../explore/report-junit.ts";
import { renderExploreMarkdown } from "../explore/report-markdown.ts";
import { coverageLine, renderExplorePretty } from "../explore/report-pretty.ts";
import { renderExploreScript } from "../explore/report-script.ts";
import { recordedResult, twoCancelsHistory } from "./explore-recorded-result.ts";

describe("explore's terminal report", () => {
  it("says under the timeline where every linearization fails", () => {
    const text = renderExplorePretty(recordedResult(), { color: false });
    assert.match(
      text,
      /^ {2}longest linearization of A: #0 \(→ pending\), #1 \(→ cancelled\); then A is cancelled \(not pending; listed; a cancel answers 409\)$/m,
    );
    assert.match(
      text,
      /^ {2}every linearization of A fails at one of: #1 cancel A → 204 \(a second 204: the order was no longer pending\); #2 cancel A → 204 \(a second 204: the order was no longer pending\)$/m,
    );
  });

  it("names only the orders an operation names: a missing id no step used is not among them", () => {
    const recorded = twoCancelsHistory();
    const history = {
      ...recorded,
      given: { ...recorded.given, missing: ["9999"] },
      operations: recorded.operations.slice(1),
    };
    const text = renderExplorePretty(recordedResult({}, history), { color: false });
    assert.match(text, /minimal history: 2 operations, 2 clients, 1 order;/);
    assert.match(text, /^ {2}orders: A = 9007199254740993$/m);
  });

  it("leaves out a missing id no step cancels and no list shows, though every list watched it", () => {
    const recorded = twoCancelsHistory();
    const history = { ...recorded, given: { ...recorded.given, missing: ["999999"] } };
    const text = renderExplorePretty(recordedResult({}, history), { color: false });
    assert.match(text, /minimal history: 3 operations, 2 clients, 1 order;/);
    assert.match(text, /^ {2}orders: A = 9007199254740993$/m);
    assert.match(text, /#0 list → 200: shows A \(/);
    const shown = {
      ...history,
      operations: history.operations.map((operation) =>
        operation.op === "list"
          ? { ...operation, shown: new Map([...(operation.shown ?? []), ["999999", 0]]) }
          : operation,
      ),
    };
    const listed = renderExplorePretty(recordedResult({}, shown), { color: false });
    assert.match(listed, /^ {2}orders: A = 9007199254740993, B = 999999$/m);
  });

  it("says shrinking stopped at a hook's failure, not that the orders ran out", () => {
    const result = recordedResult();
    if (result.finding) result.finding.shrinkEnded = "hook";
    const text = renderExplorePretty(result, { color: false });
    assert.match(text, /shrinking stopped when a hook failed \(see the warnings\), smaller may exist/);
    assert.doesNotMatch(text, /orders ran out/);
  });

  it("says a minimal history that could not be replayed was not, rather than failed 0 of 0", () => {
    const result = recordedResult();
    if (result.finding) result.finding.reproduced = { failed: 0, of: 0 };
    const text = renderExplorePretty(result, { color: false });
    assert.match(text, /minimal history: .*; not replayed/);
    assert.doesNotMatch(text, /0 of 0/);
  });

  it("is not alone: every report of a pass says what it covered, overlap included", () => {
    const { finding: _, ...run } = recordedResult({ ended: "budget" });
    const coverage = {
      ...run.coverage,
      ...{ histories: 31, operations: 257, orders: 73, clients: 8 },
      ...{ concurrentPairs: 19, listsConcurrentWithCancels: 11 },
    };
    const passed = { ...run, coverage };
    const line = coverageLine(passed);
    assert.match(
      line,
      /31 histories, 257 operations, 73 orders, up to 8 clients; overlap: 19 pairs .*, 11 lists/,
    );
    const reports = {
      pretty: renderExplorePretty(passed, { color: false }),
      markdown: renderExploreMarkdown(passed),
      junit: renderExploreJunit(passed),
      html: renderExploreHtml(passed),
      script: renderExploreScript(passed),
    };
    for (const [name, text] of Object.entries(reports)) assert.ok(text.includes(line), name);
    assert.deepEqual(JSON.parse(renderExploreJson(passed)).coverage, coverage);
  });
});
