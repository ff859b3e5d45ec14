import { printable } from "../../common/printable.ts";
import type { CheckResult, Report } from "./report.ts";

/**
 * A copy of a report whose every text is printable (see common/printable.ts): what a target sent (messages
 * quoting it, headers, body excerpts, paths) can then reach a terminal or a text report only as visible
 * escapes. Body excerpts and reproductions keep their line breaks. The JSON report needs none of this:
 * JSON escapes control characters itself.
 */
export function printableReport(report: Report): Report {
  const line = (text: string) => printable(text);
  const copy: Report = {
    ...report,
    target: line(report.target),
    warnings: report.warnings.map(line),
    scenarios: report.scenarios.map((scenario) => ({
      ...scenario,
      title: line(scenario.title),
      ...(scenario.reason !== undefined ? { reason: line(scenario.reason) } : {}),
      checks: scenario.checks.map(printableCheck),
    })),
  };
  if (report.notes !== undefined) copy.notes = report.notes.map(line);
  if (report.health !== undefined) copy.health = line(report.health);
  if (report.ended !== undefined)
    copy.ended = { ...report.ended, message: line(report.ended.message), judged: line(report.ended.judged) };
  if (report.traffic?.firstUpstreamFailure !== undefined)
    copy.traffic = { ...report.traffic, firstUpstreamFailure: line(report.traffic.firstUpstreamFailure) };
  if (report.coverage) copy.coverage = report.coverage.map((row) => ({ ...row, path: line(row.path) }));
  return copy;
}

function printableCheck(check: CheckResult): CheckResult {
  const copy: CheckResult = { ...check, message: printable(check.message) };
  if (check.spec !== undefined) copy.spec = printable(check.spec);
  if (check.request)
    copy.request = {
      ...check.request,
      path: printable(check.request.path),
      headers: printableHeaders(check.request.headers),
    };
  if (check.response)
    copy.response = {
      ...check.response,
      headers: printableHeaders(check.response.headers),
      body: printable(check.response.body, true),
    };
  if (check.reproduce !== undefined) copy.reproduce = printable(check.reproduce, true);
  return copy;
}

function printableHeaders(headers: Record<string, string>): Record<string, string> {
  const copy: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) copy[printable(name)] = printable(value);
  return copy;
}
