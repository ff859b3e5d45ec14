import { outcomeOf } from "./outcome.ts";
import type { Report } from "./report.ts";

/** The report as it is, led by its outcome: the verdict its exit code gives, and why it is not a pass. */
export function renderJson(report: Report): string {
  return `${JSON.stringify({ outcome: outcomeOf(report), ...report }, null, 2)}\n`;
}
