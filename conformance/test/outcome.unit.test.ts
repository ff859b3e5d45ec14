import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { endedLine } from "../reports/describe.ts";
import { renderHtml } from "../reports/html.ts";
import { renderJson } from "../reports/json.ts";
import { renderJunit } from "../reports/junit.ts";
import { renderMarkdown } from "../reports/markdown.ts";
import { gateExitCode, outcomeOf } from "../reports/outcome.ts";
import { renderPretty } from "../reports/pretty.ts";
import {
  type CheckResult,
  errorReportOf,
  noTraffic,
  type Report,
  type ScenarioResult,
  summarize,
  type TrafficSummary,
} from "../reports/report.ts";
import { recordedResult } from "./explore-recorded-result.ts";

const check = fc.oneof(
  fc.constantFrom<CheckResult>(
    { id: "a", status: "passed", message: "held" },
    { id: "b", status: "failed", message: "broke" },
    { id: "c", status: "skipped", message: "not asked" },
    { id: "d", status: "skipped", message: "over --max-memory", notJudged: true },
  ),
);

const scenario = fc.array(check, { maxLength: 4 }).map(
  (checks): ScenarioResult => ({
    id: "s",
    title: "a scenario",
    status: checks.some((each) => each.status === "failed")
      ? "failed"
      : checks.length > 0 && checks.every((each) => each.status === "skipped")
        ? "skipped"
        : "passed",
    checks,
  }),
);

const count = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 }));
const traffic = fc.record<TrafficSummary>({
  exchanges: count,
  judged: count,
  judgedInPart: count,
  notJudged: count,
  upstreamFailures: count,
  replaced: count,
  cutOff: count,
  notWhole: count,
  unreplaced: count,
  faults: count,
});

const ended = fc.oneof(
  fc.constant(undefined),
  fc.record({
    kind: fc.constantFrom(
      "error" as const,
      "interrupted" as const,
      "command failed" as const,
      "running" as const,
    ),
    message: fc.constant("the target refused the API key; nothing was judged"),
    judged: fc.constant("nothing was judged"),
    signal: fc.constantFrom("SIGINT" as const, "SIGTERM" as const),
    exitCode: fc.integer({ min: 1, max: 255 }),
  }),
);

/** Run ends of every kind: error, interrupted, failed, partial (a limit, an upstream, a fault), nothing judged, passed. */
const report = fc
  .record({
    scenarios: fc.array(scenario, { maxLength: 3 }),
    ended,
    traffic: fc.option(traffic, { nil: undefined }),
  })
  .map(({ scenarios, ended, traffic }): Report => {
    // A run that cut traffic short judged what it judged in part: its counts hold that.
    const shown: Report = {
      summary: summarize(scenarios),
      target: "http://127.0.0.1:1/v1",
      startedAt: "2026-11-27T00:00:00.000Z",
      warnings: [],
      requests: 1,
      retries: 0,
      durationMs: 5,
      scenarios,
    };
    if (ended) shown.ended = ended;
    if (traffic) shown.traffic = { ...traffic, judgedInPart: traffic.judgedInPart + traffic.notWhole };
    return shown;
  });

/** What a pass is, read from the report's own fields rather than through outcomeOf. */
function isPass(shown: Report): boolean {
  if (shown.ended || shown.summary.failed > 0) return false;
  if (shown.scenarios.some((each) => each.checks.some((one) => one.notJudged))) return false;
  const traffic = shown.traffic;
  if (!traffic) return true;
  return (
    traffic.faults === 0 &&
    traffic.upstreamFailures === 0 &&
    traffic.notWhole === 0 &&
    traffic.judgedInPart === 0 &&
    traffic.judged > 0
  );
}

/** Whether each report's headline says passed. */
function saysPassed(shown: Report): Record<string, boolean> {
  const pretty = renderPretty(shown, { color: false }).trimEnd().split("\n").at(-1) ?? "";
  const junit = renderJunit(shown).match(/<testsuites[^>]* failures="(\d+)" errors="(\d+)"/);
  return {
    pretty: pretty === "outcome: passed",
    markdown: renderMarkdown(shown).includes("✅ passed"),
    html: /<title>Conformance passed:/.test(renderHtml(shown)),
    json: (JSON.parse(renderJson(shown)) as { outcome: { verdict: string } }).outcome.verdict === "passed",
    junit: junit?.[1] === "0" && junit[2] === "0",
  };
}

describe("outcome: one reading of a run's end for every report and the exit code", () => {
  it("no report says passed unless the exit code is 0, for run ends of every kind", () => {
    fc.assert(
      fc.property(report, (shown) => {
        const pass = isPass(shown);
        assert.equal(gateExitCode(shown) === 0, pass, JSON.stringify(shown));
        for (const [reporter, passed] of Object.entries(saysPassed(shown)))
          assert.equal(passed, pass, `${reporter}: ${JSON.stringify(shown)}`);
      }),
      { numRuns: 300 },
    );
  });

  it("an exit code for each end: 2 error or not checked whole, 130 and 143 for a stop, 1 failed or nothing judged", () => {
    const base = errorReportOf(
      { target: "t", startedAt: "2026-11-27T00:00:00.000Z", requests: 0, durationMs: 1 },
      "nothing accepts connections",
    );
    assert.equal(gateExitCode(base), 2);
    const interrupted: Report = {
      ...base,
      ended: { kind: "interrupted", message: "stopped", judged: "1 of 2", signal: "SIGTERM" },
    };
    assert.equal(gateExitCode(interrupted), 143);
    const quiet: Report = { ...base, traffic: noTraffic() };
    delete quiet.ended;
    assert.deepEqual(outcomeOf(quiet), {
      verdict: "nothing judged",
      headline: "nothing judged",
      reasons: ["no exchange was judged, so nothing was checked"],
    });
    assert.equal(gateExitCode(quiet), 1);
    const unanswered: Report = {
      ...quiet,
      traffic: {
        ...noTraffic(),
        upstreamFailures: 2,
        firstUpstreamFailure: "#1 GET /v1/store/orders: ECONNREFUSED",
      },
    };
    assert.deepEqual(outcomeOf(unanswered).reasons, [
      "2 requests got no whole answer from the upstream, so they were not judged whole: #1 GET /v1/store/orders: ECONNREFUSED",
    ]);
    assert.equal(gateExitCode(unanswered), 2);
  });

  it("a refused key's error line says 'nothing was judged' once", () => {
    const line = endedLine({
      kind: "error",
      message: "the target refused the API key; nothing was judged",
      judged: "nothing was judged",
    });
    assert.equal(line, "error: the target refused the API key; nothing was judged");
    assert.equal(
      endedLine({ kind: "error", message: "no route", judged: "nothing was judged" }),
      "error: no route; nothing was judged",
    );
  });

  it("reads an explore() result as the explore command does: 1 a finding, 0 a pass, 2 judged too little", () => {
    const found = recordedResult();
    assert.equal(outcomeOf(found).verdict, "failed");
    assert.equal(gateExitCode(found), 1);
    const clean = recordedResult({ finding: undefined, ended: "budget" });
    assert.deepEqual(outcomeOf(clean), { verdict: "passed", headline: "nothing found", reasons: [] });
    assert.equal(gateExitCode(clean), 0);
    assert.equal(gateExitCode({ ...clean, interruptedBy: "SIGTERM" }), 143);
    assert.equal(gateExitCode({ ...clean, interruptedBy: "a stop of the caller's" }), 130);
    const nothing = { ...clean, coverage: { ...clean.coverage, orders: 0, histories: 0 } };
    assert.equal(outcomeOf(nothing).verdict, "nothing judged");
    assert.equal(gateExitCode(nothing), 2);
    const idless = {
      reason: "some of their orders have no int64 id",
      count: 1,
      limit: false,
      example: "GET /v1/store/orders answered 200: 1 of its 3 orders has no int64 id",
    };
    const some = { ...clean, coverage: { ...clean.coverage, lists: 3, listsReadWhole: 2 } };
    assert.equal(gateExitCode({ ...some, listsNotJudged: [idless] }), 0);
    const most = { ...clean, coverage: { ...clean.coverage, lists: 3, listsReadWhole: 1 } };
    const tooFew = outcomeOf({ ...most, listsNotJudged: [{ ...idless, count: 2 }] });
    assert.equal(tooFew.verdict, "partial");
    assert.match(
      tooFew.reasons[0] as string,
      /^only 1 of 3 lists were judged \(2 some of their orders have no int64 id\), fewer than half/,
    );
    const bound = {
      reason: "past a reader's bound",
      count: 1,
      limit: true,
      example: "GET /v1/store/orders answered 200: past the reader's string bound",
    };
    const limited = { ...some, listsNotJudged: [bound] };
    assert.equal(gateExitCode(limited), 2);
    assert.match(
      outcomeOf(limited).reasons[0] as string,
      /^1 list was not judged, for a limit of the run's \(past a reader's bound: raise it\); the first: GET/,
    );
  });
});
