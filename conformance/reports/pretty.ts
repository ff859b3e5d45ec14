import { styleText } from "node:util";
import { oneLinePerCheck } from "./check-lines.ts";
import { coverageByOperation, neverSeen, trafficSentence } from "./coverage.ts";
import { describeCheck, endedLine } from "./describe.ts";
import { outcomeOf } from "./outcome.ts";
import { printableReport } from "./printable-report.ts";
import type { Report } from "./report.ts";

type Style = Parameters<typeof styleText>[0];

/** The report for people: one line per scenario, and for each failure the evidence. */
export function renderPretty(shown: Report, options: { color: boolean }): string {
  // Nothing a target sent reaches the terminal raw.
  const report = printableReport(shown);
  const paint = (style: Style, text: string) => (options.color ? styleText(style, text) : text);
  const mark = { passed: paint("green", "✔"), failed: paint("red", "✖"), skipped: paint("yellow", "-") };
  const lines = report.ended ? [paint(["bold", "red"], endedLine(report.ended))] : [];
  if (report.health) lines.push(paint(["bold", "yellow"], `warning: ${report.health}`));
  lines.push(paint("bold", `Petstore Store Orders conformance: ${report.target}`));
  for (const warning of report.warnings) lines.push(paint("yellow", `warning: ${warning}`));
  for (const note of report.notes ?? []) lines.push(`${paint("cyan", "note:")} ${note}`);
  lines.push("");
  for (const scenario of report.scenarios.map(oneLinePerCheck)) {
    const counts = scenario.checks.length === 1 ? "1 check" : `${scenario.checks.length} checks`;
    const notWhole = scenario.checks.filter((check) => check.notJudged).length;
    const detail =
      scenario.status === "skipped"
        ? `skipped: ${scenario.reason}`
        : `${counts}${notWhole > 0 ? `, ${notWhole} not judged whole` : ""}`;
    // Nothing failed but not everything was judged: not the pass mark.
    const shownAs = scenario.status === "passed" && notWhole > 0 ? "skipped" : scenario.status;
    lines.push(`${mark[shownAs]} ${scenario.id}  ${scenario.title} ${paint("dim", `(${detail})`)}`);
    for (const check of scenario.checks) {
      if (check.status === "failed") {
        const [first = "", ...rest] = describeCheck(check);
        lines.push(`    ${mark.failed} ${paint("red", first)}`, ...rest.map((line) => `      ${line}`));
      } else if (check.status === "skipped") {
        lines.push(`    ${mark.skipped} ${check.id}: ${check.message}`);
      }
    }
  }
  lines.push(...coverageLines(report, paint));
  const { passed, failed, skipped } = report.summary;
  const scenarios = report.scenarios.length;
  const failedScenarios = report.scenarios.filter((scenario) => scenario.status === "failed").length;
  const outcome = outcomeOf(report);
  const style: Style = outcome.verdict === "passed" ? "green" : failed > 0 || report.ended ? "red" : "yellow";
  lines.push(
    "",
    `${scenarios} scenarios (${failedScenarios} failed), ${report.requests} requests${report.retries > 0 ? ` (${report.retries} retried after 429)` : ""} in ${report.durationMs} ms`,
  );
  // The ended line already leads the report; the other reasons are said here, next to the verdict.
  if (!report.ended) lines.push(...outcome.reasons.map((reason) => paint(style, `not a pass: ${reason}`)));
  lines.push(
    paint(style, `${passed} passed, ${failed} failed, ${skipped} skipped`),
    paint(["bold", style], `outcome: ${outcome.headline}`),
  );
  return `${lines.join("\n")}\n`;
}

/** For a traffic report: each operation's documented statuses with how often they were seen. */
function coverageLines(report: Report, paint: (style: Style, text: string) => string): string[] {
  const groups = coverageByOperation(report);
  if (groups.length === 0) return [];
  const lines = ["", paint("bold", "Coverage: documented statuses seen in the traffic")];
  const width = Math.max(...groups.map((group) => `${group.method} ${group.path}`.length));
  for (const group of groups) {
    const cells = group.rows.map((row) =>
      row.seen === 0
        ? paint("yellow", `${row.status} never`)
        : row.documented
          ? paint("green", `${row.status} ×${row.seen}`)
          : paint("red", `${row.status} ×${row.seen} (undocumented)`),
    );
    lines.push(`  ${`${group.method} ${group.path}`.padEnd(width)}  ${cells.join("  ")}`);
  }
  const missing = neverSeen(report);
  if (missing.length > 0) lines.push(paint("yellow", `  never seen: ${missing.join(", ")}`));
  const traffic = trafficSentence(report);
  if (traffic) lines.push(`  ${traffic}`);
  return lines;
}
