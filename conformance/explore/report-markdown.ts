import { printable } from "../../common/printable.ts";
import { describeFinding } from "../model/linearizability.ts";
import { cell, code, MARK, target } from "../reports/markdown.ts";
import { outcomeOf } from "../reports/outcome.ts";
import type { ExploreResult } from "./explore.ts";
import { stepCount } from "./program.ts";
import {
  count,
  coverageLine,
  findingEndText,
  reproducedText,
  shrinkEndText,
  timelineLines,
  triedText,
} from "./report-pretty.ts";
import type { ShrunkFinding } from "./shrink.ts";
import { formatMs, timelineOf } from "./timeline.ts";

/**
 * A short summary for a CI job summary or a merge-request comment, in the suite's style: the verdict, what
 * was covered, the lists not judged, and a finding's rule with its minimal history. Nothing a target sent
 * becomes markup. It ends with a blank line, so that reports written one after another stay apart.
 */
export function renderExploreMarkdown(result: ExploreResult): string {
  const outcome = outcomeOf(result);
  // A blank line first and last: reports appended one after another to a job summary stay apart.
  const lines: string[] = [""];
  if (outcome.verdict !== "passed" && outcome.verdict !== "failed")
    lines.push(...outcome.reasons.flatMap((reason) => [`> **${cell(printable(reason))}**`, ""]));
  lines.push(
    `### Petstore Store Orders explore: ${MARK[outcome.verdict]} ${outcome.headline}`,
    "",
    `**Target:** ${target(printable(result.target))} · **Seed:** ${result.seed} · **Ran:** ${formatMs(result.durationMs)} (${cell(endedText(result))})`,
    "",
    cell(printable(coverageLine(result))),
  );
  for (const warning of result.warnings) lines.push("", `> ⚠️ ${cell(printable(warning))}`);
  lines.push(...listsNotJudgedTable(result));
  if (result.finding) lines.push(...findingSection(result.finding));
  return `${lines.join("\n")}\n\n`;
}

function endedText(result: ExploreResult): string {
  if (result.ended === "budget") return `the budget, ${formatMs(result.budgetMs)}, was spent`;
  if (result.ended === "orders") return "the orders given were used up";
  if (result.ended === "interrupted") return `interrupted by ${result.interruptedBy}`;
  return findingEndText(result);
}

function listsNotJudgedTable(result: ExploreResult): string[] {
  if (result.listsNotJudged.length === 0) return [];
  const { lists, listsReadWhole } = result.coverage;
  return [
    "",
    `Lists not judged: ${lists - listsReadWhole} of ${lists} (they say nothing of which orders exist; not a finding)`,
    "",
    "| Reason | Lists | The first |",
    "|---|---|---|",
    ...result.listsNotJudged.map(
      (not) =>
        `| ${cell(printable(not.reason))}${not.limit ? " (a limit of the run's: raise it)" : ""} | ${not.count} | ${code(printable(not.example))} |`,
    ),
  ];
}

function findingSection(finding: ShrunkFinding): string[] {
  const { minimal } = finding;
  const involved = new Set(minimal.verdict.findings.flatMap((one) => one.operations));
  const timeline = timelineOf(minimal.history, involved);
  const drawn = [
    ...timelineLines(timeline, (_, text) => text),
    `  orders: ${[...timeline.names].map(([id, name]) => `${name} = ${printable(id)}`).join(", ")}`,
  ].map((line) => printable(line));
  const longest = Math.max(
    2,
    ...drawn.flatMap((line) => [...line.matchAll(/`+/g)].map((run) => run[0].length)),
  );
  const fence = "`".repeat(longest + 1);
  return [
    "",
    "| Rule | What happened |",
    "|---|---|",
    ...minimal.verdict.findings.map(
      (one) =>
        `| \`${one.rule}\` | ${cell(printable(withoutRule(one.rule, describeFinding(one, minimal.history))))} |`,
    ),
    "",
    `Minimal history: ${count(minimal.history.operations.length, "operation")}, ${count(minimal.program.length, "client")}, ${count(timeline.names.size, "order")}; ${reproducedText(finding)} (shrunk from ${count(stepCount(finding.original.program), "step")} of ${count(finding.original.program.length, "client")}, ${cell(triedText(finding))}; ${cell(shrinkEndText(finding))}). The JSON and HTML reports have it whole; the script reporter plays it again.`,
    "",
    "<details><summary>Minimal history</summary>",
    "",
    `${fence}text`,
    ...drawn,
    fence,
    "",
    "</details>",
  ];
}

/** A finding's words without the rule id the row's first column already names. */
function withoutRule(rule: string, text: string): string {
  const close = text.indexOf("): ", rule.length);
  if (!text.startsWith(`${rule} (`) || close === -1) return text;
  // "cancel-once (violation): order 7: …" reads "violation: order 7: …".
  return `${text.slice(rule.length + 2, close)}${text.slice(close + 1)}`;
}
