import { oneLinePerCheck } from "./check-lines.ts";
import { coverageByOperation, neverSeen, trafficSentence } from "./coverage.ts";
import { endedLine } from "./describe.ts";
import { outcomeOf, type Verdict } from "./outcome.ts";
import { printableReport } from "./printable-report.ts";
import type { Report } from "./report.ts";

/**
 * A short summary and a table of failed checks, for a CI job summary or a merge-request comment. Nothing a
 * target sent becomes markup there: no link, image, mention, HTML or extra table cell. It begins and ends
 * with a blank line: a job summary is often several reports appended one after another, and an HTML block
 * (the reproductions' `<details>`) runs on until a blank line.
 */
export function renderMarkdown(shown: Report): string {
  const report = printableReport(shown);
  const { passed, failed, skipped } = report.summary;
  const lines: string[] = [""];
  if (report.ended) lines.push(`> **${cell(endedLine(report.ended))}**`, "");
  if (report.health) lines.push(`> **${cell(report.health)}**`, "");
  const outcome = outcomeOf(report);
  if (!report.ended) lines.push(...outcome.reasons.flatMap((reason) => [`> **${cell(reason)}**`, ""]));
  lines.push(
    `### Petstore Store Orders conformance: ${MARK[outcome.verdict]} ${outcome.headline}`,
    "",
    `**Target:** ${target(report.target)} · **Checks:** ${passed} passed, ${failed} failed, ${skipped} skipped · ` +
      `**Requests:** ${report.requests}${report.retries > 0 ? ` (${report.retries} retried after 429)` : ""} in ${report.durationMs} ms`,
  );
  for (const warning of report.warnings) lines.push("", `> ⚠️ ${cell(warning)}`);
  for (const note of report.notes ?? []) lines.push("", `> ℹ️ note: ${cell(note)}`);
  const skippedScenarios = report.scenarios.filter((scenario) => scenario.status === "skipped");
  if (skippedScenarios.length > 0) {
    lines.push(
      "",
      `Skipped: ${skippedScenarios.map((s) => `\`${s.id}\` (${cell(s.reason ?? "")})`).join(", ")}`,
    );
  }
  lines.push(...failuresTable(report.scenarios));
  lines.push(...notJudgedTable(report.scenarios));
  const groups = coverageByOperation(report);
  if (groups.length > 0) {
    lines.push("", "| Operation | Status | Seen |", "|---|---|---|");
    for (const group of groups) {
      for (const row of group.rows) {
        const seen = row.seen === 0 ? "never" : `${row.seen}${row.documented ? "" : " (undocumented)"}`;
        lines.push(`| ${code(`${group.method} ${group.path}`)} | ${row.status} | ${seen} |`);
      }
    }
    const missing = neverSeen(report);
    if (missing.length > 0)
      lines.push("", `Never seen: ${missing.map((entry) => `\`${entry}\``).join(", ")}`);
    const traffic = trafficSentence(report);
    if (traffic) lines.push("", traffic);
  }
  return `${lines.join("\n")}\n\n`;
}

/** The failed checks, the first FAILURES_SHOWN in full, with their reproductions folded. */
function failuresTable(scenarios: Report["scenarios"]): string[] {
  const lines: string[] = [];
  const failures = scenarios
    .map(oneLinePerCheck)
    .flatMap((scenario) =>
      scenario.checks.filter((check) => check.status === "failed").map((check) => ({ scenario, check })),
    );
  if (failures.length > 0) {
    const shown = failures.slice(0, FAILURES_SHOWN);
    lines.push("", "| Scenario | Check | What happened | Request | Spec |", "|---|---|---|---|---|");
    for (const { scenario, check } of shown) {
      const request = check.request ? code(`${check.request.method} ${check.request.path}`) : "";
      lines.push(
        `| ${scenario.id} | \`${check.id}\` | ${cell(check.message)} | ${request} | ${cell(check.spec ?? "")} |`,
      );
    }
    const reproductions = shown.filter(({ check }) => check.reproduce);
    if (reproductions.length > 0) {
      lines.push("", "<details><summary>Reproduce</summary>");
      for (const { check } of reproductions) {
        // A fetch snippet opens a block or says why in a comment; anything else is a shell script.
        const fence = /^(\{|\/\/)/.test(check.reproduce ?? "") ? "js" : "sh";
        lines.push("", `\`${check.id}\`:`, "", `\`\`\`${fence}`, fenceSafe(check.reproduce ?? ""), "```");
      }
      lines.push("", "</details>");
    }
    if (failures.length > shown.length)
      lines.push("", `…and ${failures.length - shown.length} more failed checks: see the full report.`);
  }
  return lines;
}

/** The checks kept from being judged whole, each with its own reason: what makes the run no pass. */
function notJudgedTable(scenarios: Report["scenarios"]): string[] {
  const notJudged = scenarios.flatMap((scenario) =>
    scenario.checks.filter((check) => check.notJudged).map((check) => ({ scenario, check })),
  );
  if (notJudged.length === 0) return [];
  const lines = ["", "| Scenario | Check not judged whole | Why |", "|---|---|---|"];
  for (const { scenario, check } of notJudged.slice(0, FAILURES_SHOWN))
    lines.push(`| ${scenario.id} | \`${check.id}\` | ${cell(check.message)} |`);
  if (notJudged.length > FAILURES_SHOWN)
    lines.push("", `…and ${notJudged.length - FAILURES_SHOWN} more not judged whole: see the full report.`);
  return lines;
}

/** Only a pass is green: a job summary must not look green on a red job. */
export const MARK: Record<Verdict, string> = {
  error: "❌",
  interrupted: "⚠️",
  "command failed": "❌",
  running: "⏳",
  failed: "❌",
  partial: "⚠️",
  "nothing judged": "❌",
  passed: "✅",
};

/** Failed checks shown in full: a job summary or a comment stays short. */
const FAILURES_SHOWN = 20;

/** Code that cannot close its fence early. */
function fenceSafe(code: string): string {
  return code.replace(/```/g, "`\u200b``");
}

/**
 * Text as plain text in a table cell or a line: Markdown's punctuation escaped, HTML's brackets as entities,
 * line breaks as spaces, and a zero-width space after `@` and inside `://` and `www.`, which GitHub and
 * GitLab would otherwise turn into mentions and links.
 */
export function cell(text: string): string {
  return text
    .replace(/\r?\n/g, " ")
    .replace(/[\\`*_[\]!|~]/g, (character) => `\\${character}`)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/@/g, "@&#8203;")
    .replace(/:\/\//g, ":&#8203;//")
    .replace(/www\./gi, (www) => `${www.slice(0, 3)}&#8203;.`);
}

/**
 * The target's address as a code span, which no renderer links or mentions from, so that it copies whole;
 * what follows it (" (observed through the proxy)") as plain text.
 */
export function target(text: string): string {
  const space = text.indexOf(" ");
  if (space === -1) return code(text);
  return `${code(text.slice(0, space))}${cell(text.slice(space))}`;
}

/** Text as a code span in a table cell: no markup inside, pipes escaped as tables need. */
export function code(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = "`".repeat(longest + 1);
  const inside = text.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
  // A space on each side only where a backtick would otherwise touch the fence.
  const pad = inside.startsWith("`") || inside.endsWith("`") ? " " : "";
  return `${fence}${pad}${inside}${pad}${fence}`;
}
