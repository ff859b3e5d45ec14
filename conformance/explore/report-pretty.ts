import { printable } from "../../common/printable.ts";
import { describeChoices, describeFinding } from "../model/linearizability.ts";
import { outcomeOf } from "../reports/outcome.ts";
import type { ExploreResult } from "./explore.ts";
import { findingLinearizations, linearizationLines } from "./finding-linearizations.ts";
import { stepCount } from "./program.ts";
import type { ShrunkFinding } from "./shrink.ts";
import { formatMs, type Timeline, timelineOf } from "./timeline.ts";

const BAR_COLUMNS = 48;

/** The terminal's report: what was searched and covered, and a finding's minimal history as a timeline. */
export function renderExplorePretty(result: ExploreResult, { color }: { color: boolean }): string {
  const paint = (code: number, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  const lines = [
    `petstore-conformance explore ${printable(result.target)}`,
    `seed ${result.seed} (--seed ${result.seed} plays the same programs), ${result.clients} clients at most`,
    ...result.warnings.map((warning) => paint(33, `warning: ${printable(warning)}`)),
    endedLine(result),
    coverageLine(result),
    ...listsNotJudgedLines(result),
  ];
  if (result.allowStaleMs > 0 || result.largestStaleMs > 0)
    lines.push(
      `largest staleness a list needed: ${formatMs(result.largestStaleMs)}${result.allowStaleMs > 0 ? ` (allowed: ${formatMs(result.allowStaleMs)})` : ""}`,
    );
  if (result.finding)
    lines.push("", ...findingLines(result.finding, result.seed, result.allowStaleMs, paint));
  else if (result.interruptedBy !== undefined)
    lines.push(
      "",
      paint(
        33,
        `INTERRUPTED by ${result.interruptedBy}: nothing found in what was covered, which is not a pass`,
      ),
    );
  else lines.push("", ...verdictLines(result, paint));
  return `${lines.join("\n")}\n`;
}

/** Nothing found, and not stopped: a pass, or a run whose answers judged too little to be one. */
function verdictLines(result: ExploreResult, paint: (code: number, text: string) => string): string[] {
  const outcome = outcomeOf(result);
  if (outcome.verdict === "passed")
    return [paint(32, "PASS: no history the spec's model cannot explain was found")];
  return [
    paint(33, `NOT A PASS: ${outcome.headline}; no history the spec's model cannot explain was found`),
    ...outcome.reasons.map((reason) => paint(33, `  ${printable(reason)}`)),
  ];
}

/**
 * The lists that said nothing of which orders exist, by reason, each with the first of them: a list left
 * out is never left out silently.
 */
export function listsNotJudgedLines(result: ExploreResult): string[] {
  const { lists, listsReadWhole } = result.coverage;
  if (result.listsNotJudged.length === 0) return [];
  return [
    `lists not judged: ${lists - listsReadWhole} of ${lists} (they say nothing of which orders exist; not a finding)`,
    ...result.listsNotJudged.map(
      (not) =>
        `  ${not.count} ${printable(not.reason)}${not.limit ? " (a limit of the run's: raise it)" : ""}; the first: ${printable(not.example)}`,
    ),
  ];
}

function endedLine(result: ExploreResult): string {
  const searched = `searched ${formatMs(result.durationMs)}`;
  if (result.ended === "budget") return `${searched}: the budget (${formatMs(result.budgetMs)}) was spent`;
  if (result.ended === "orders")
    return `${searched}: the orders given were used up before the budget was spent`;
  if (result.ended === "interrupted") return `${searched}: interrupted by ${result.interruptedBy}`;
  // The run's time holds the shrinking after the search (bounded by --shrink-budget, not --budget).
  return `ran ${formatMs(result.durationMs)}: ${findingEndText(result)}`;
}

/** How a run that found something went on: "then shrank it" only when a smaller program was tried. */
export function findingEndText(result: ExploreResult): string {
  if ((result.finding?.candidatesTried ?? 0) > 0) return "stopped at a finding, then shrank it";
  return "stopped at a finding; no smaller program was tried";
}

export function coverageLine(result: ExploreResult): string {
  const c = result.coverage;
  const unjudged =
    c.lists - c.listsReadWhole + c.cancels - c.cancelsDecided > 0
      ? `; judged: ${c.listsReadWhole} of ${c.lists} lists (read whole), ${c.cancelsDecided} of ${c.cancels} cancels (the rest answered nothing the model decides by)`
      : "";
  return `covered ${c.histories} histories, ${c.operations} operations, ${c.orders} orders, up to ${c.clients} clients; overlap: ${c.concurrentPairs} pairs of concurrent operations on one order, ${c.listsConcurrentWithCancels} lists concurrent with a cancel${unjudged}`;
}

function findingLines(
  finding: ShrunkFinding,
  seed: number,
  allowStaleMs: number,
  paint: (code: number, text: string) => string,
): string[] {
  const { minimal } = finding;
  const verdict = minimal.verdict;
  const involved = new Set(verdict.findings.flatMap((one) => one.operations));
  const timeline = timelineOf(minimal.history, involved);
  return [
    paint(31, "FAIL: a history the spec's model cannot explain"),
    ...verdict.findings.map((one) => `  ${printable(describeFinding(one, minimal.history))}`),
    ...choicesLines(finding),
    ...replayLines(seed, finding).map((line) => `  ${line}`),
    "",
    `minimal history: ${count(minimal.history.operations.length, "operation")}, ${count(minimal.program.length, "client")}, ${count(timeline.names.size, "order")}; ${reproducedText(finding)}`,
    `  (shrunk from ${count(stepCount(finding.original.program), "step")} of ${count(finding.original.program.length, "client")}, ${triedText(finding)}; ${shrinkEndText(finding)})`,
    ...timelineLines(timeline, paint),
    `  orders: ${[...timeline.names].map(([id, name]) => `${name} = ${printable(id)}`).join(", ")}`,
    ...findingLinearizations(finding, allowStaleMs).flatMap((drawing) =>
      linearizationLines(drawing, timeline).map((line) => `  ${printable(line)}`),
    ),
  ];
}

/** The run's choices the finding was judged under, when earlier histories ruled others out. */
function choicesLines(finding: ShrunkFinding): string[] {
  if (finding.ruledOut.length === 0) return [];
  const left = finding.choices.map(describeChoices).join("; or ");
  return [`  judged under the run's choices as its other histories showed them: ${left}`];
}

/** How to see the finding again, and for a stale read, how to accept bounded staleness: for every report. */
export function replayLines(seed: number, finding: ShrunkFinding): string[] {
  const lines = [
    `to replay: --seed ${seed} plays the same programs; --reporter script:FILE writes a script that plays the minimal program again (exit 1 when it sees the failure again)`,
  ];
  if (finding.minimal.verdict.findings.some((one) => one.rule === "stale-read"))
    lines.push(
      "a stale read: a deployment that promises only bounded staleness (read replicas) is accepted with --allow-stale DURATION",
    );
  return lines;
}

export function reproducedText(finding: ShrunkFinding): string {
  const { failed, of } = finding.reproduced;
  // None, when the run was stopped (or its orders ran out) before the minimal program could be replayed.
  return of === 0 ? "not replayed" : `failed ${failed} of ${of} replays`;
}

/** How many smaller programs were tried, how often each, and why that often. */
export function triedText(finding: ShrunkFinding): string {
  const { failed, of } = finding.originalReproduced;
  const tries = `${count(finding.candidatesTried, "smaller program")} tried up to ${count(finding.triesPerCandidate, "time")} each`;
  return of === 0 ? tries : `${tries}, the first having failed ${failed} of ${of} replays`;
}

export function shrinkEndText(finding: ShrunkFinding): string {
  if (finding.shrinkEnded === "minimal") return "1-minimal: without any one step every try passed";
  if (finding.shrinkEnded === "budget") return "shrinking stopped at its budget, smaller may exist";
  if (finding.shrinkEnded === "interrupted") return "shrinking was interrupted, smaller may exist";
  if (finding.shrinkEnded === "hook")
    return "shrinking stopped when a hook failed (see the warnings), smaller may exist";
  return "shrinking stopped when the orders ran out, smaller may exist";
}

/** One row per operation, grouped by lane: a bar from send to answer on a common scale, then what it was. */
export function timelineLines(timeline: Timeline, paint: (code: number, text: string) => string): string[] {
  const scale = BAR_COLUMNS / Math.max(timeline.endMs, 1);
  const column = (ms: number) => Math.min(BAR_COLUMNS - 1, Math.floor(ms * scale));
  const lines = [
    `  ${"".padEnd(9)}0 ms${" ".repeat(BAR_COLUMNS - 8)}${formatMs(timeline.endMs).padStart(8)}`,
  ];
  for (const lane of timeline.lanes) {
    lane.bars.forEach((bar, at) => {
      const from = column(bar.fromMs);
      const to = bar.toMs === null ? BAR_COLUMNS - 1 : Math.max(from, column(bar.toMs));
      const body = bar.toMs === null ? "·".repeat(to - from + 1) : "=".repeat(to - from + 1);
      const drawn = `${" ".repeat(from)}${body}`.padEnd(BAR_COLUMNS);
      const name = at === 0 ? `client ${lane.client}` : "";
      const text = `#${bar.index} ${bar.label} (${formatMs(bar.fromMs)}–${bar.toMs === null ? "…" : formatMs(bar.toMs)})`;
      const row = `  ${name.padEnd(9)}|${drawn}| ${printable(text)}`;
      lines.push(bar.involved ? paint(31, row) : row);
    });
  }
  return lines;
}

export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
