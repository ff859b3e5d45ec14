import type { CheckResult, Report } from "./report.ts";

const BODY_LINES = 12;

/** A failed check as a person needs it: what was expected and what came back, with the spec section. */
export function describeCheck(check: CheckResult): string[] {
  const lines = [`${check.id}: ${check.message}`];
  if (check.spec) lines.push(`  spec: ${check.spec}`);
  if (check.request) {
    lines.push(`  request: ${check.request.method} ${check.request.path}`);
    for (const [name, value] of Object.entries(check.request.headers)) lines.push(`    ${name}: ${value}`);
  }
  if (check.response) {
    lines.push(`  response: ${check.response.status}`);
    for (const [name, value] of Object.entries(check.response.headers)) lines.push(`    ${name}: ${value}`);
    if (check.response.body) {
      const body = check.response.body.split("\n");
      lines.push(...body.slice(0, BODY_LINES).map((line) => `    | ${line}`));
      if (body.length > BODY_LINES) lines.push("    | …");
    }
  }
  if (check.reproduce) {
    lines.push("  reproduce:");
    lines.push(...check.reproduce.split("\n").map((line) => `    ${line}`));
  }
  return lines;
}

/**
 * A run stopped short, in one line: what stopped it and what was judged, said once even when the error's
 * own message already says it.
 */
export function endedLine(ended: NonNullable<Report["ended"]>): string {
  const said = ended.message.endsWith(`; ${ended.judged}`) || ended.message === ended.judged;
  return `${ended.kind}: ${ended.message}${said ? "" : `; ${ended.judged}`}`;
}
