import { oneLinePerCheck } from "./check-lines.ts";
import { describeCheck, endedLine } from "./describe.ts";
import { type Element, junitXml } from "./junit-xml.ts";
import { outcomeOf } from "./outcome.ts";
import { printableReport } from "./printable-report.ts";
import type { CheckResult, Report } from "./report.ts";

const SUITE = "petstore-conformance";

/** JUnit XML: one testcase per scenario, as CI tools (GitLab, Jenkins, GitHub reporters) load it. */
export function renderJunit(shown: Report): string {
  // XML 1.0 cannot hold most control characters at all: CI's readers reject the file. They are escaped.
  const report = printableReport(shown);
  const ended = report.ended ? [endedCase(report.ended)] : [];
  const notPassed = report.ended ? [] : notPassedCase(report);
  const runCases = [...ended, ...notPassed];
  const totals = {
    "@_tests": report.scenarios.length + runCases.length,
    "@_failures":
      report.scenarios.filter((scenario) => scenario.status === "failed").length +
      runCases.filter((element) => element.failure !== undefined).length,
    "@_errors": runCases.filter((element) => element.error !== undefined).length,
    "@_skipped": report.scenarios.filter((scenario) => scenario.status === "skipped" || notWhole(scenario))
      .length,
    "@_time": (report.durationMs / 1000).toFixed(3),
  };
  const xml = junitXml({
    testsuites: {
      "@_name": SUITE,
      ...totals,
      testsuite: {
        "@_name": `${SUITE} ${report.target}`,
        ...totals,
        properties: { property: properties(report) },
        testcase: [...runCases, ...report.scenarios.map(oneLinePerCheck).map(testcase)],
      },
    },
  }) as string;
  return `${xml.trimEnd()}\n`;
}

function properties(report: Report): Element[] {
  const property = (name: string, value: string): Element => ({ "@_name": name, "@_value": value });
  return [
    property("target", report.target),
    ...(report.health ? [property("health", report.health)] : []),
    ...report.warnings.map((warning) => property("warning", warning)),
    ...(report.notes ?? []).map((note) => property("note", note)),
    ...(report.coverage ?? []).map((row) =>
      property(
        `coverage ${row.operation} ${row.status}${row.documented ? "" : " (undocumented)"}`,
        String(row.seen),
      ),
    ),
  ];
}

/** A run stopped short, as CI tools show a run's own error: a test case of its own with an <error>. */
function endedCase(ended: NonNullable<Report["ended"]>): Element {
  const { name, type } = ENDED_CASE[ended.kind];
  const why = { "@_message": ended.message, "@_type": type, "#text": endedLine(ended) };
  // A wrapped command that failed is a failed step, as CI shows a failed test: a <failure>, not an <error>.
  return {
    "@_classname": SUITE,
    "@_name": name,
    ...(ended.kind === "command failed" ? { failure: why } : { error: why }),
  };
}

const ENDED_CASE: Record<NonNullable<Report["ended"]>["kind"], { name: string; type: string }> = {
  error: { name: "run: the run could not judge the target", type: "RunError" },
  interrupted: { name: "run: interrupted", type: "Interrupted" },
  "command failed": { name: "run: the wrapped command failed", type: "CommandFailed" },
  running: { name: "run: still running (a checkpoint)", type: "Running" },
};

/**
 * A run that neither failed a check nor passed (not everything checked, or nothing judged), as a test case
 * of its own: CI's test tab must not show a gate that exits non-zero as all passed or all skipped. Not
 * everything checked is an <error>, as the run's exit code 2 is; nothing judged a <failure>, as its 1 is.
 */
function notPassedCase(report: Report): Element[] {
  const outcome = outcomeOf(report);
  if (outcome.verdict !== "partial" && outcome.verdict !== "nothing judged") return [];
  const partial = outcome.verdict === "partial";
  const why = {
    "@_message": outcome.reasons.join("; "),
    "@_type": partial ? "NotEverythingChecked" : "NothingJudged",
    "#text": outcome.reasons.join("\n"),
  };
  return [
    {
      "@_classname": SUITE,
      "@_name": `run: ${outcome.headline}`,
      ...(partial ? { error: why } : { failure: why }),
    },
  ];
}

function testcase(scenario: Report["scenarios"][number]): Element {
  const element: Element = { "@_classname": SUITE, "@_name": `${scenario.id}: ${scenario.title}` };
  if (scenario.status === "skipped") {
    element.skipped = { "@_message": scenario.reason ?? "skipped" };
    return element;
  }
  const failed = scenario.checks.filter((check) => check.status === "failed");
  if (failed.length > 0) {
    element.failure = {
      "@_message": failed.map((check) => `${check.id}: ${check.message}`).join(" | "),
      "@_type": "ConformanceFailure",
      "#text": failed.map((check) => describeCheck(check).join("\n")).join("\n\n"),
    };
  } else if (notWhole(scenario)) {
    // No failure, but not judged whole: skipped, so that CI's test tab does not show it passed.
    const notJudged = scenario.checks.filter((check) => check.notJudged);
    element.skipped = {
      "@_message": `${notJudged.length === 1 ? "1 check" : `${notJudged.length} checks`} not judged whole, the first ${notJudged[0]?.id} (${notJudged[0]?.message})`,
    };
  }
  element["system-out"] = { "#text": scenario.checks.map(checkLine).join("\n") };
  return element;
}

/** A scenario nothing failed in that has checks a limit or an unread answer kept from being judged whole. */
function notWhole(scenario: Report["scenarios"][number]): boolean {
  return (
    scenario.status === "passed" &&
    scenario.checks.some((check) => check.notJudged) &&
    !scenario.checks.some((check) => check.status === "failed")
  );
}

function checkLine(check: CheckResult): string {
  return `${check.status.toUpperCase()} ${check.id}: ${check.message}`;
}
