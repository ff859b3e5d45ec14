import type { History, HistoryOperation } from "../model/history.ts";

/** A history as the reports draw it: one lane per client, each operation a bar from send to answer. */
export interface Timeline {
  /** Short names of the orders, A, B, …, by id, in the order they first appear. */
  names: ReadonlyMap<string, string>;
  lanes: readonly TimelineLane[];
  /** The last instant drawn, in ms from the start. */
  endMs: number;
}

export interface TimelineLane {
  client: number;
  bars: readonly TimelineBar[];
}

export interface TimelineBar {
  /** Its index in `history.operations`. */
  index: number;
  fromMs: number;
  /** Null when no answer came: the bar runs to the end. */
  toMs: number | null;
  /** "cancel A → 204", "list: A, B (not C)". */
  label: string;
  /** Named by a finding. */
  involved: boolean;
}

export function timelineOf(history: History, involved: ReadonlySet<number>): Timeline {
  const names = new Map<string, string>();
  const name = (id: string) => {
    let short = names.get(id);
    if (short === undefined) {
      short = shortName(names.size);
      names.set(id, short);
    }
    return short;
  };
  const drawn = drawnOrders(history);
  // Only orders an operation names: cancelled ones, and every one drawn once a list was read whole.
  const listed = history.operations.some((operation) => operation.op === "list" && operation.shown !== null);
  for (const id of drawn.ids) if (listed || drawn.cancelled.has(id)) name(id);
  const lanes = new Map<number, TimelineBar[]>();
  let endMs = 0;
  history.operations.forEach((operation, index) => {
    endMs = Math.max(endMs, operation.answeredAt ?? operation.sentAt);
    const bars = lanes.get(operation.client) ?? [];
    lanes.set(operation.client, bars);
    bars.push({
      index,
      fromMs: operation.sentAt,
      toMs: operation.answeredAt,
      label: labelOf(operation, drawn.ids, name),
      involved: involved.has(index),
    });
  });
  return {
    names,
    lanes: [...lanes.entries()].sort(([a], [b]) => a - b).map(([client, bars]) => ({ client, bars })),
    endMs,
  };
}

/**
 * The orders a drawing names: the pending and shipped ones, and a missing id only when a step cancels it or
 * a list shows it. Every list watches the missing id (one listed is a finding), but when no step names it,
 * that no list shows it is no part of the story.
 */
function drawnOrders(history: History): { ids: string[]; cancelled: ReadonlySet<string> } {
  const cancelled = new Set(
    history.operations.flatMap((operation) => (operation.op === "cancel" ? [operation.orderId] : [])),
  );
  const shown = (id: string) =>
    history.operations.some((operation) => operation.op === "list" && operation.shown?.has(id) === true);
  const missing = history.given.missing.filter((id) => cancelled.has(id) || shown(id));
  return { ids: [...history.given.pending, ...history.given.shipped, ...missing], cancelled };
}

function labelOf(
  operation: HistoryOperation,
  given: readonly string[],
  name: (id: string) => string,
): string {
  const answer = operation.status === null ? "no answer" : String(operation.status);
  if (operation.op === "cancel") return `cancel ${name(operation.orderId)} → ${answer}`;
  if (operation.shown === null)
    return `list → ${answer}${operation.status === 200 ? " (not read whole)" : ""}`;
  const shown = given.filter((id) => operation.shown?.has(id)).map(name);
  const hidden = given.filter((id) => !operation.shown?.has(id)).map(name);
  if (shown.length === 0) return `list → ${answer}: shows none of ${hidden.join(" ")}`;
  return `list → ${answer}: shows ${shown.join(" ")}${hidden.length > 0 ? `, not ${hidden.join(" ")}` : ""}`;
}

/** A, B, …, Z, AA, AB, … */
function shortName(index: number): string {
  let name = "";
  for (let rest = index; ; rest = Math.floor(rest / 26) - 1) {
    name = String.fromCharCode(65 + (rest % 26)) + name;
    if (rest < 26) return name;
  }
}

export function formatMs(ms: number): string {
  return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
}
