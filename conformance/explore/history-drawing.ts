import { printable } from "../../common/printable.ts";
import type { OrderLinearizationDrawing } from "../model/partial-linearization.ts";
import { statusName } from "../model/partial-linearization.ts";
import type { OrderStatus, RunChoices } from "../model/spec-model.ts";
import { describeStates } from "./finding-linearizations.ts";
import { formatMs, type Timeline, type TimelineBar } from "./timeline.ts";

const WIDTH = 1100;
const LABEL = 92;
const RIGHT = 14;
const AXIS = 30;
const ROW = 42;
const REASON_LINE = 17;
const BAR = 18;
/** The baseline of a bar's label, below the bar. */
const LABEL_LINE = 4 + BAR + 13;
/** Characters of the drawing's font per unit of the view box, for deciding whether a text fits a segment. */
const CHAR_WIDTH = 7.3;

/** What one bar carries of the linearizations: its points (order name and step) and why it cannot follow. */
interface BarMarks {
  steps: Array<{ name: string; step: number; atMs: number; after: string; title: string }>;
  failures: Array<{ name: string; reason: string }>;
}

interface Scale {
  x(ms: number): number;
  endMs: number;
}

/**
 * The minimal history in the style of Porcupine's visualiser, as static SVG: one row per operation, a bar
 * from send to answer grouped in client lanes; each operation of an order's longest linearization marked
 * at its point with the order's status after it; the operations at which every linearization fails drawn
 * in red with the reason; below, one lane per order with its statuses along time. Every text escaped.
 */
export function svgHistory(timeline: Timeline, drawings: readonly OrderLinearizationDrawing[]): string {
  const marks = marksOf(timeline, drawings);
  const scale: Scale = {
    x: (ms) => LABEL + (Math.max(0, ms) * (WIDTH - LABEL - RIGHT)) / Math.max(timeline.endMs, 1),
    endMs: timeline.endMs,
  };
  const parts: string[] = axis(scale);
  const points = new Map<string, { x: number; y: number }>();
  let y = AXIS;
  for (const lane of timeline.lanes) {
    parts.push(`<text x="4" y="${y + 17}" class="lane">client ${lane.client}</text>`);
    for (const bar of lane.bars) {
      const barMarks = marks.get(bar.index) ?? { steps: [], failures: [] };
      parts.push(barRow(bar, barMarks, y, scale));
      for (const step of barMarks.steps)
        points.set(`${step.name}${step.step}`, pointOf(bar, step.atMs, y, scale));
      y += ROW + barMarks.failures.length * REASON_LINE;
    }
    parts.push(`<line x1="0" x2="${WIDTH}" y1="${y - 2}" y2="${y - 2}" class="lane-rule"/>`);
  }
  y += 14;
  for (const drawing of drawings) {
    const name = timeline.names.get(drawing.orderId) ?? drawing.orderId;
    parts.push(stateLane(drawing, name, y, scale, points));
    y += ROW + 6;
  }
  return `<svg role="img" aria-label="timeline of the minimal history with where its linearizations fail" viewBox="0 0 ${WIDTH} ${y + 4}" width="100%" xmlns="http://www.w3.org/2000/svg">${parts.join("")}</svg>`;
}

function marksOf(timeline: Timeline, drawings: readonly OrderLinearizationDrawing[]): Map<number, BarMarks> {
  const marks = new Map<number, BarMarks>();
  const of = (index: number) => {
    const found = marks.get(index) ?? { steps: [], failures: [] };
    marks.set(index, found);
    return found;
  };
  for (const drawing of drawings) {
    if (!drawing.drawn) continue;
    const name = timeline.names.get(drawing.orderId) ?? drawing.orderId;
    drawing.prefix.forEach((step, at) => {
      of(step.operation).steps.push({
        name,
        step: at + 1,
        atMs: step.atMs,
        after: statusName(step.after),
        title: `${name}${at + 1}: linearized at ${formatMs(step.atMs)}; ${name} is then ${describeStates(step.after, drawing.choices)}`,
      });
    });
    for (const failure of drawing.failures)
      of(failure.operation).failures.push({ name, reason: failure.reason });
  }
  return marks;
}

function axis(scale: Scale): string[] {
  const parts: string[] = [];
  for (const fraction of [0, 0.25, 0.5, 0.75, 1]) {
    const ms = scale.endMs * fraction;
    const x = scale.x(ms).toFixed(1);
    const anchor = fraction === 0 ? "start" : fraction === 1 ? "end" : "middle";
    parts.push(
      `<line x1="${x}" x2="${x}" y1="${AXIS - 10}" y2="100%" class="grid"/><text x="${x}" y="14" class="axis" text-anchor="${anchor}">${escapeHtml(formatMs(ms))}</text>`,
    );
  }
  return parts;
}

/** Where a step's point is drawn: within its bar, even for a stale list whose point lies before it was sent. */
function pointOf(bar: TimelineBar, atMs: number, y: number, scale: Scale): { x: number; y: number } {
  const end = bar.toMs ?? scale.endMs;
  return { x: scale.x(Math.min(end, Math.max(bar.fromMs, atMs))), y: y + 4 + BAR / 2 };
}

function barRow(bar: TimelineBar, marks: BarMarks, y: number, scale: Scale): string {
  const from = scale.x(bar.fromMs);
  const to = scale.x(bar.toMs ?? scale.endMs);
  const width = Math.max(3, to - from);
  const failed = marks.failures.length > 0;
  const classes = [
    "bar",
    bar.involved ? "involved" : "",
    failed ? "failed" : "",
    bar.toMs === null ? "open" : "",
  ];
  const steps = marks.steps.map((step) => `● ${step.name}${step.step} → ${step.after}`);
  const text = [`#${bar.index} ${bar.label}`, ...steps].join("   ");
  const title = [
    `#${bar.index} ${bar.label} (${formatMs(bar.fromMs)}–${bar.toMs === null ? "no answer" : formatMs(bar.toMs)})`,
    ...marks.steps.map((step) => step.title),
    ...marks.failures.map(
      (failure) => `every linearization of ${failure.name} fails here: ${failure.reason}`,
    ),
  ].join("\n");
  // Text starts at the bar when it starts in the left half, and ends at its end otherwise, so that it stays in view.
  const leftHalf = from < (LABEL + WIDTH) / 2;
  const textX = leftHalf ? from + 4 : to - 4;
  const anchor = leftHalf ? "start" : "end";
  const circles = marks.steps.map((step) => {
    const point = pointOf(bar, step.atMs, y, scale);
    return `<circle cx="${point.x.toFixed(1)}" cy="${point.y.toFixed(1)}" r="5" class="point"/>`;
  });
  const reasons = marks.failures.map(
    (failure, at) =>
      `<text x="${textX.toFixed(1)}" y="${y + LABEL_LINE + (at + 1) * REASON_LINE}" text-anchor="${anchor}" class="reason">✗ ${escapeHtml(`${failure.name}: ${failure.reason}`)}</text>`,
  );
  return `<g class="${classes.filter(Boolean).join(" ")}"><title>${escapeHtml(title)}</title><rect x="${from.toFixed(1)}" y="${y + 4}" width="${width.toFixed(1)}" height="${BAR}" rx="3"/>${circles.join("")}<text x="${textX.toFixed(1)}" y="${y + LABEL_LINE}" text-anchor="${anchor}">${escapeHtml(text)}</text>${reasons.join("")}</g>`;
}

/** One order's statuses along time, from the points of its longest linearization; where it stops, a red mark. */
function stateLane(
  drawing: OrderLinearizationDrawing,
  name: string,
  y: number,
  scale: Scale,
  points: ReadonlyMap<string, { x: number; y: number }>,
): string {
  const label = `<text x="4" y="${y + 17}" class="lane">order ${escapeHtml(name)}</text>`;
  if (!drawing.drawn)
    return `${label}<text x="${LABEL}" y="${y + 17}" class="reason">${escapeHtml(`not drawn: ${drawing.reason}`)}</text>`;
  // The lane changes at the points themselves; a stale list's lies before its bar, and its line slants back to it.
  const edges = [LABEL, ...drawing.prefix.map((step) => scale.x(step.atMs))];
  const statuses = [drawing.start, ...drawing.prefix.map((step) => step.after)];
  const parts = [label];
  statuses.forEach((status, at) => {
    const from = edges[at] as number;
    const to = at + 1 < edges.length ? (edges[at + 1] as number) : scale.x(scale.endMs);
    parts.push(
      segment(status, drawing.choices, name, from, to, y, at === 0 ? "at the start" : `after ${name}${at}`),
    );
  });
  for (const [at, point] of drawing.prefix.map((_, at) => [at, points.get(`${name}${at + 1}`)] as const))
    if (point !== undefined)
      parts.push(
        `<line x1="${point.x.toFixed(1)}" x2="${(edges[at + 1] as number).toFixed(1)}" y1="${point.y.toFixed(1)}" y2="${y + 4}" class="point-line"/><text x="${((edges[at + 1] as number) + 3).toFixed(1)}" y="${y + 2}" class="step">${escapeHtml(`${name}${at + 1}`)}</text>`,
      );
  if (!drawing.linearizable) {
    const stop = edges[edges.length - 1] as number;
    const leftHalf = stop < (LABEL + WIDTH) / 2;
    const text =
      drawing.prefix.length > 0
        ? `✗ every linearization fails after ${name}${drawing.prefix.length}`
        : "✗ no operation can come first";
    parts.push(
      `<g class="stop"><title>${escapeHtml(`every linearization of ${name} fails after ${drawing.prefix.length} of its ${drawing.operations.length} operations`)}</title><text x="${(leftHalf ? stop + 3 : stop - 3).toFixed(1)}" y="${y + 36}" text-anchor="${leftHalf ? "start" : "end"}" class="reason">${escapeHtml(text)}</text></g>`,
    );
  }
  return parts.join("");
}

function segment(
  status: readonly OrderStatus[],
  choices: RunChoices,
  name: string,
  from: number,
  to: number,
  y: number,
  when: string,
): string {
  const text = statusName(status);
  const kind = status.length === 1 ? (status[0] as string) : "mixed";
  const fits = (to - from - 8) / CHAR_WIDTH >= text.length;
  const title = `${name} ${when}: ${describeStates(status, choices)}`;
  return `<g class="state state-${kind}"><title>${escapeHtml(title)}</title><rect x="${from.toFixed(1)}" y="${y + 4}" width="${Math.max(1, to - from).toFixed(1)}" height="${BAR}"/>${fits ? `<text x="${(from + 4).toFixed(1)}" y="${y + 17}">${escapeHtml(text)}</text>` : ""}</g>`;
}

/** A value as HTML text: markup escaped, and what reorders, hides or breaks text shown as escapes. */
export function escapeHtml(text: string): string {
  return printable(text, true).replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The drawing's styles, for the page that holds it. */
export const HISTORY_DRAWING_STYLE = `
svg text{font:12px ui-monospace,Menlo,monospace;fill:#1b1f24}svg .axis{fill:#57606a}svg .lane{font-weight:600}
svg .grid{stroke:#eaeef2}svg .lane-rule{stroke:#d0d7de}
.bar rect{fill:#dbe9f7;stroke:#3b6ea5}.bar.involved rect{fill:#f9d7dc;stroke:#b00020}.bar.open rect{stroke-dasharray:4 3}
.bar.failed rect{stroke-width:3}.bar.failed>text,svg .reason{fill:#b00020;font-weight:600}
svg .point{fill:#1b1f24;stroke:#fff;stroke-width:1.5}svg .point-line{stroke:#57606a;stroke-dasharray:2 3}svg .step{font-size:10px;fill:#57606a}
.state rect{stroke:#8c959f}.state-pending rect{fill:#fff3c4}.state-cancelled rect{fill:#d8dee4}.state-shipped rect{fill:#cfe8d6}
.state-absent rect{fill:#fff;stroke-dasharray:3 2}.state-mixed rect{fill:#ece4f7}
.legend{display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;padding:0;list-style:none;font-size:.9rem}
.legend .swatch{display:inline-block;width:1.6rem;height:.8rem;margin-right:.35rem;vertical-align:middle;border:1px solid #3b6ea5;background:#dbe9f7;border-radius:2px}
.swatch.involved{background:#f9d7dc;border-color:#b00020}.swatch.failed{background:#f9d7dc;border:3px solid #b00020}
.swatch.open{border-style:dashed}.swatch.point{width:.7rem;height:.7rem;border-radius:50%;background:#1b1f24;border-color:#1b1f24}
.swatch.pending{background:#fff3c4;border-color:#8c959f}.swatch.cancelled{background:#d8dee4;border-color:#8c959f}
.swatch.shipped{background:#cfe8d6;border-color:#8c959f}.swatch.absent{background:#fff;border:1px dashed #8c959f}
`;

/** What the drawing's marks mean, as a list beside it. */
export const HISTORY_DRAWING_LEGEND = `<ul class="legend" aria-label="legend">
<li><span class="swatch"></span>an operation, from send to answer</li>
<li><span class="swatch involved"></span>named by the finding</li>
<li><span class="swatch failed"></span>where every linearization fails (reason below it)</li>
<li><span class="swatch open"></span>no answer</li>
<li><span class="swatch point"></span>linearization point: A2 is order A's second step</li>
<li><span class="swatch pending"></span>pending</li>
<li><span class="swatch cancelled"></span>cancelled</li>
<li><span class="swatch shipped"></span>not pending</li>
<li><span class="swatch absent"></span>absent</li>
</ul>`;
