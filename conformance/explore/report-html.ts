import { printable } from "../../common/printable.ts";
import { describeFinding } from "../model/linearizability.ts";
import type { ExploreResult } from "./explore.ts";
import { coverageLine, reproducedText, shrinkEndText } from "./report-pretty.ts";
import type { ShrunkFinding } from "./search.ts";
import { formatMs, type Timeline, timelineOf } from "./timeline.ts";

const WIDTH = 900;
const LABEL = 90;
const ROW = 26;

/**
 * One page, readable without script: what was searched and covered, and for a finding its minimal history
 * as an SVG timeline (one lane per client, each operation a bar from send to answer, those the finding
 * names in red, an operation without answer open to the right). Every text from the target is escaped.
 */
export function renderExploreHtml(result: ExploreResult): string {
  const verdict = result.finding
    ? "a finding"
    : result.interruptedBy !== undefined
      ? "interrupted"
      : "nothing found";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Explore: ${escapeHtml(verdict)}: ${escapeHtml(result.target)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Petstore Store Orders explore: <span class="${verdictClass(result)}">${escapeHtml(verdict)}</span></h1>
<section><dl class="summary">
<dt>Target</dt><dd>${escapeHtml(result.target)}</dd>
<dt>Started</dt><dd>${escapeHtml(result.startedAt)}</dd>
<dt>Seed</dt><dd>${result.seed}</dd>
<dt>Ended</dt><dd>${escapeHtml(endedText(result))}</dd>
<dt>Coverage</dt><dd>${escapeHtml(coverageLine(result))}</dd>
</dl>
${result.warnings.map((warning) => `<p class="warning">warning: ${escapeHtml(warning)}</p>`).join("\n")}
</section>
${result.finding ? findingSection(result.finding) : noFindingSection(result)}
</main>
</body>
</html>
`;
}

function verdictClass(result: ExploreResult): string {
  if (result.finding) return "failed";
  return result.interruptedBy !== undefined ? "warning" : "passed";
}

/** Nothing found; a run cut short says so, since what it covered is not a pass. */
function noFindingSection(result: ExploreResult): string {
  if (result.interruptedBy !== undefined)
    return `<section><p class="warning">Interrupted by ${escapeHtml(result.interruptedBy)}: nothing found in what was covered, which is not a pass.</p></section>`;
  return `<section><p class="passed">No history the spec's model cannot explain was found.</p></section>`;
}

function endedText(result: ExploreResult): string {
  if (result.ended === "budget") return `the budget (${formatMs(result.budgetMs)}) was spent`;
  if (result.ended === "orders") return "the orders given were used up";
  if (result.ended === "interrupted") return `interrupted by ${result.interruptedBy}`;
  return "stopped at a finding";
}

function findingSection(finding: ShrunkFinding): string {
  const { minimal } = finding;
  const involved = new Set(minimal.verdict.findings.flatMap((one) => one.operations));
  const timeline = timelineOf(minimal.history, involved);
  const lines = minimal.verdict.findings.map(
    (one) => `<li>${escapeHtml(describeFinding(one, minimal.history))}</li>`,
  );
  return `<section class="finding">
<h2>A history the spec's model cannot explain</h2>
<ul>${lines.join("")}</ul>
<p>Minimal history: ${minimal.history.operations.length} operations, ${minimal.program.length} clients; ${escapeHtml(reproducedText(finding))}; ${escapeHtml(shrinkEndText(finding))}.</p>
${svgTimeline(timeline)}
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

/** Porcupine's way of drawing a history: lanes of bars on one time axis, labelled, with a title for each bar. */
function svgTimeline(timeline: Timeline): string {
  const rows = timeline.lanes.reduce((sum, lane) => sum + lane.bars.length, 0);
  const height = (rows + 1) * ROW + 10;
  const scale = (WIDTH - LABEL - 10) / Math.max(timeline.endMs, 1);
  const x = (ms: number) => (LABEL + ms * scale).toFixed(1);
  const parts: string[] = [
    `<text x="${LABEL}" y="14" class="axis">0 ms</text>`,
    `<text x="${WIDTH - 10}" y="14" class="axis" text-anchor="end">${escapeHtml(formatMs(timeline.endMs))}</text>`,
  ];
  let row = 1;
  for (const lane of timeline.lanes) {
    parts.push(`<text x="4" y="${row * ROW + 17}" class="lane">client ${lane.client}</text>`);
    for (const bar of lane.bars) {
      const y = row * ROW + 4;
      const end = bar.toMs === null ? timeline.endMs : bar.toMs;
      const width = Math.max(2, (end - bar.fromMs) * scale);
      const title = `#${bar.index} ${bar.label} (${formatMs(bar.fromMs)}–${bar.toMs === null ? "no answer" : formatMs(bar.toMs)})`;
      parts.push(
        `<g class="${bar.involved ? "bar involved" : "bar"}${bar.toMs === null ? " open" : ""}"><title>${escapeHtml(title)}</title><rect x="${x(bar.fromMs)}" y="${y}" width="${width.toFixed(1)}" height="${ROW - 8}" rx="3"/><text x="${x(bar.fromMs)}" y="${y + 13}" dx="4">${escapeHtml(`#${bar.index} ${bar.label}`)}</text></g>`,
      );
      row++;
    }
  }
  return `<svg role="img" aria-label="timeline of the minimal history" viewBox="0 0 ${WIDTH} ${height}" width="100%" xmlns="http://www.w3.org/2000/svg">${parts.join("")}</svg>`;
}

/** A value as HTML text: markup escaped, and what reorders, hides or breaks text shown as escapes. */
function escapeHtml(text: string): string {
  return printable(text, true).replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

const STYLE = `
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f3f5f7}
main{max-width:70rem;margin:0 auto;padding:1rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin:.2rem 0}
section{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:.75rem 1rem;margin-bottom:1rem}
.summary{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}.summary dt{font-weight:600}.summary dd{margin:0}
.warning{color:#8a4500}.passed{color:#0a6b2d}.failed{color:#b00020}
.finding{border-left:6px solid #b00020}
svg text{font:12px ui-monospace,Menlo,monospace;fill:#1b1f24}svg .axis{fill:#57606a}
.bar rect{fill:#dbe9f7;stroke:#3b6ea5}.bar.involved rect{fill:#f9d7dc;stroke:#b00020}.bar.open rect{stroke-dasharray:4 3}
table{border-collapse:collapse}th,td{text-align:left;padding:.2rem .8rem .2rem 0;border-bottom:1px solid #eaeef2}
tr.involved td{color:#b00020;font-weight:600}
code{font-family:ui-monospace,Menlo,monospace}
`;
