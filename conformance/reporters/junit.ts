import { create } from "xmlbuilder2";
import type { CheckResult, Report } from "../report.ts";
import { describeCheck } from "./describe.ts";
import { printableReport } from "./printable-report.ts";

const SUITE = "petstore-conformance";

/** JUnit XML: one testcase per scenario, as CI tools (GitLab, Jenkins, GitHub reporters) load it. */
export function renderJunit(shown: Report): string {
  // XML 1.0 cannot hold most control characters at all: CI's readers reject the file. They are escaped.
  const report = printableReport(shown);
  const failures = report.scenarios.filter((scenario) => scenario.status === "failed").length;
  const skipped = report.scenarios.filter((scenario) => scenario.status === "skipped").length;
  const seconds = (report.durationMs / 1000).toFixed(3);
  const root = create({ version: "1.0", encoding: "UTF-8" }).ele("testsuites", {
    name: SUITE,
    tests: report.scenarios.length,
    failures,
    errors: 0,
    skipped,
    time: seconds,
  });
  const suite = root.ele("testsuite", {
    name: `${SUITE} ${report.target}`,
    tests: report.scenarios.length,
    failures,
    errors: 0,
    skipped,
    time: seconds,
  });
  const properties = suite.ele("properties");
  properties.ele("property", { name: "target", value: report.target });
  if (report.health) properties.ele("property", { name: "health", value: report.health });
  for (const warning of report.warnings) properties.ele("property", { name: "warning", value: warning });
  for (const row of report.coverage ?? []) {
    properties.ele("property", {
      name: `coverage ${row.operation} ${row.status}${row.documented ? "" : " (undocumented)"}`,
      value: String(row.seen),
    });
  }

  for (const scenario of report.scenarios) {
    const testcase = suite.ele("testcase", { classname: SUITE, name: `${scenario.id}: ${scenario.title}` });
    if (scenario.status === "skipped") {
      testcase.ele("skipped", { message: scenario.reason ?? "skipped" });
      continue;
    }
    const failed = scenario.checks.filter((check) => check.status === "failed");
    if (failed.length > 0) {
      testcase
        .ele("failure", {
          message: failed.map((check) => `${check.id}: ${check.message}`).join(" | "),
          type: "ConformanceFailure",
        })
        .txt(failed.map((check) => describeCheck(check).join("\n")).join("\n\n"));
    }
    testcase.ele("system-out").txt(scenario.checks.map(checkLine).join("\n"));
  }
  return `${root.end({ prettyPrint: true })}\n`;
}

function checkLine(check: CheckResult): string {
  return `${check.status.toUpperCase()} ${check.id}: ${check.message}`;
}
