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
      /^ {2}every linearization of A fails at one of: #1 cancel A → 204 \(a 204 though the order was no longer pending\); #2 cancel A → 204 \(a 204 though the order was no longer pending\)$/m,
    );
  });

  it("calls neither of two 204s the second: either may be the one the model takes first", () => {
    const result = recordedResult();
    const reports = [renderExplorePretty(result, { color: false }), renderExploreHtml(result)];
    for (const text of reports) assert.doesNotMatch(text, /second 204/);
  });

  it("draws the linearization under the choices its headline names, not the history's first", () => {
    const result = recordedResult();
    if (result.finding) {
      result.finding.choices = [{ cancelledOrdersListed: false, secondCancelStatus: 404 }];
      result.finding.ruledOut = [
        {
          choices: { cancelledOrdersListed: true, secondCancelStatus: 409 },
          history: result.finding.minimal.history,
        },
      ];
    }
    const text = renderExplorePretty(result, { color: false });
    assert.match(
      text,
      /judged under the run's choices .*: cancelled orders leave the list, a second cancel answers 404/,
    );
    assert.match(text, /then A is cancelled \(not pending; not listed; a cancel answers 404\)/);
    assert.doesNotMatch(text, /a cancel answers 409/);
    const json = JSON.parse(renderExploreJson(result));
    assert.deepEqual(json.finding.linearization[0].choices, json.finding.choices[0]);
  });

  it("says how to replay a finding in every report, and for a stale read, how to allow staleness", () => {
    const result = recordedResult();
    const findings = result.finding?.minimal.verdict.findings ?? [];
    const replay = /to replay: --seed 7 plays the same programs; --reporter script:FILE/i;
    for (const text of [
      renderExplorePretty(result, { color: false }),
      renderExploreJunit(result),
      renderExploreHtml(result),
    ]) {
      assert.match(text, replay);
      assert.doesNotMatch(text, /--allow-stale/);
    }
    (findings[0] as { rule: string }).rule = "stale-read";
    for (const text of [
      renderExplorePretty(result, { color: false }),
      renderExploreJunit(result),
      renderExploreHtml(result),
    ])
      assert.match(text, /a stale read: .* is accepted with --allow-stale DURATION/i);
  });

  it("says no smaller program was tried rather than that it shrank the finding", () => {
    const result = recordedResult();
    if (result.finding) {
      result.finding.candidatesTried = 0;
      result.finding.shrinkEnded = "budget";
    }
    for (const text of [renderExplorePretty(result, { color: false }), renderExploreMarkdown(result)]) {
      assert.match(text, /stopped at a finding; no smaller program was tried/);
      assert.doesNotMatch(text, /shrank it/);
    }
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
