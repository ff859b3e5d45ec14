import { describeFinding } from "../model/linearizability.ts";
import type { OrderLinearizationDrawing } from "../model/partial-linearization.ts";
import { outcomeOf, type RunOutcome } from "../reports/outcome.ts";
import type { ExploreResult } from "./explore.ts";
import { describeStates, findingLinearizations, operationLabel } from "./finding-linearizations.ts";
import { escapeHtml, HISTORY_DRAWING_LEGEND, HISTORY_DRAWING_STYLE, svgHistory } from "./history-drawing.ts";
import {
  count,
  coverageLine,
  listsNotJudgedLines,
  replayLines,
  reproducedText,
  shrinkEndText,
  triedText,
} from "./report-pretty.ts";
import type { ShrunkFinding } from "./shrink.ts";
import { formatMs, type Timeline, timelineOf } from "./timeline.ts";

/**
 * One page, readable without script: what was searched and covered, and for a finding its minimal history
 * as an SVG timeline (one lane per client, each operation a bar from send to answer, those the finding
 * names in red, an operation without answer open to the right). Every text from the target is escaped.
 */
export function renderExploreHtml(result: ExploreResult): string {
  const outcome = outcomeOf(result);
  const verdict = outcome.headline;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Explore: ${escapeHtml(verdict)}: ${escapeHtml(result.target)}</title>
<style>${STYLE}${HISTORY_DRAWING_STYLE}</style>
</head>
<body>
<main>
<h1>Petstore Store Orders explore: <span class="${verdictClass(outcome)}">${escapeHtml(verdict)}</span></h1>
<section><dl class="summary">
<dt>Target</dt><dd>${escapeHtml(result.target)}</dd>
<dt>Started</dt><dd>${escapeHtml(result.startedAt)}</dd>
<dt>Seed</dt><dd>${result.seed}</dd>
<dt>Ended</dt><dd>${escapeHtml(endedText(result))}</dd>
<dt>Coverage</dt><dd>${escapeHtml(coverageLine(result))}</dd>
</dl>
${listsNotJudgedLines(result)
  .map((line) => `<p class="${outcome.verdict === "partial" ? "warning" : "note"}">${escapeHtml(line)}</p>`)
  .join("\n")}
${result.warnings.map((warning) => `<p class="warning">warning: ${escapeHtml(warning)}</p>`).join("\n")}
</section>
${result.finding ? findingSection(result.finding, result.seed, result.allowStaleMs) : noFindingSection(result, outcome)}
</main>
</body>
</html>
`;
}

function verdictClass(outcome: RunOutcome): string {
  if (outcome.verdict === "failed") return "failed";
  return outcome.verdict === "passed" ? "passed" : "warning";
}

/** Nothing found; a run cut short, or one not checked whole, says so, since what it covered is not a pass. */
function noFindingSection(result: ExploreResult, outcome: RunOutcome): string {
  if (result.interruptedBy !== undefined)
    return `<section><p class="warning">Interrupted by ${escapeHtml(result.interruptedBy)}: nothing found in what was covered, which is not a pass.</p></section>`;
  if (outcome.verdict !== "passed")
    return `<section>${outcome.reasons.map((reason) => `<p class="warning" role="alert">Not a pass: ${escapeHtml(reason)}</p>`).join("\n")}</section>`;
  return `<section><p class="passed">No history the spec's model cannot explain was found.</p></section>`;
}

function endedText(result: ExploreResult): string {
  if (result.ended === "budget") return `the budget (${formatMs(result.budgetMs)}) was spent`;
  if (result.ended === "orders") return "the orders given were used up";
  if (result.ended === "interrupted") return `interrupted by ${result.interruptedBy}`;
  return "stopped at a finding";
}

function findingSection(finding: ShrunkFinding, seed: number, allowStaleMs: number): string {
  const { minimal } = finding;
  const involved = new Set(minimal.verdict.findings.flatMap((one) => one.operations));
  const timeline = timelineOf(minimal.history, involved);
  const drawings = findingLinearizations(finding, allowStaleMs);
  const lines = minimal.verdict.findings.map(
    (one) => `<li>${escapeHtml(describeFinding(one, minimal.history))}</li>`,
  );
  return `<section class="finding">
<h2>A history the spec's model cannot explain</h2>
<ul>${lines.join("")}</ul>
<p>Minimal history: ${count(minimal.history.operations.length, "operation")}, ${count(minimal.program.length, "client")}; ${escapeHtml(reproducedText(finding))}; ${escapeHtml(triedText(finding))}; ${escapeHtml(shrinkEndText(finding))}.</p>
${replayLines(seed, finding)
  .map((line) => `<p>${escapeHtml(line.charAt(0).toUpperCase() + line.slice(1))}.</p>`)
  .join("\n")}
${svgHistory(timeline, drawings)}
${HISTORY_DRAWING_LEGEND}
${drawings.map((drawing) => linearizationSection(drawing, timeline)).join("\n")}
<p>Orders: ${[...timeline.names].map(([id, name]) => `${escapeHtml(name)} = <code>${escapeHtml(id)}</code>`).join(", ")}</p>
<table><thead><tr><th>#</th><th>Client</th><th>Operation</th><th>Sent</th><th>Answered</th></tr></thead><tbody>
${timeline.lanes
  .flatMap((lane) => lane.bars.map((bar) => ({ lane, bar })))
  .sort((a, b) => a.bar.index - b.bar.index)
  .map(
    ({ lane, bar }) =>
      `<tr${bar.involved ? ' class="involved"' : ""}><td>${bar.index}</td><td>${lane.client}</td><td>${escapeHtml(bar.label)}</td><td>${escapeHtml(formatMs(bar.fromMs))}</td><td>${bar.toMs === null ? "no answer" : escapeHtml(formatMs(bar.toMs))}</td></tr>`,
  )
  .join("\n")}
</tbody></table>
</section>`;
}

/** One order's longest linearization step by step, then where every linearization fails and why. */
function linearizationSection(drawing: OrderLinearizationDrawing, timeline: Timeline): string {
  const name = escapeHtml(timeline.names.get(drawing.orderId) ?? drawing.orderId);
  if (!drawing.drawn) return `<p>Order ${name}: not drawn, ${escapeHtml(drawing.reason)}.</p>`;
  const steps = drawing.prefix.map(
    (step, at) =>
      `<li><b>${name}${at + 1}</b> ${escapeHtml(operationLabel(timeline, step.operation))}, at ${escapeHtml(formatMs(step.atMs))}: then ${escapeHtml(describeStates(step.after, drawing.choices))}</li>`,
  );
  const failures = drawing.failures.map(
    (failure) =>
      `<li class="failed">${escapeHtml(operationLabel(timeline, failure.operation))}: ${escapeHtml(failure.reason)}</li>`,
  );
  const start = `<p>At the start ${name} is ${escapeHtml(describeStates(drawing.start, drawing.choices))}.`;
  const sequence =
    steps.length > 0
      ? `${start} The longest sequence the model accepts:</p>\n<ol>${steps.join("")}</ol>`
      : `${start} No operation of ${name} can come first.</p>`;
  if (drawing.linearizable)
    return `<h3>Linearizations of order ${name}</h3>\n${sequence}\n<p>Every operation fits this sequence: what breaks the rule is the order's record, which the model never changes.</p>`;
  const inSequence = drawing.failures.some((failure) =>
    drawing.prefix.some((step) => step.operation === failure.operation),
  );
  const another = inSequence
    ? " (one that is also in the sequence above stops another sequence as long, which took a different operation in its place)"
    : "";
  return `<h3>Linearizations of order ${name}</h3>
${sequence}
<p>Every linearization fails after ${drawing.prefix.length} of its ${drawing.operations.length} operations, at ${drawing.failures.length > 1 ? "one of these" : "this one"}${another}:</p>
<ul>${failures.join("")}</ul>`;
}

const STYLE = `
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f3f5f7}
main{max-width:70rem;margin:0 auto;padding:1rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin:.2rem 0}
section{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:.75rem 1rem;margin-bottom:1rem}
.summary{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}.summary dt{font-weight:600}.summary dd{margin:0}
.warning{color:#8a4500}.passed{color:#0a6b2d}.failed{color:#b00020}
.finding{border-left:6px solid #b00020}
table{border-collapse:collapse}th,td{text-align:left;padding:.2rem .8rem .2rem 0;border-bottom:1px solid #eaeef2}
tr.involved td,li.failed{color:#b00020;font-weight:600}h3{font-size:1rem;margin:.8rem 0 .2rem}
code{font-family:ui-monospace,Menlo,monospace}
`;
