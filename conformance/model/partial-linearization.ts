/**
 * Where an order's linearizations fail, for a report that draws them (Porcupine's "partial
 * linearizations"): the longest sequence of the order's operations, consistent with real time, that the
 * model accepts, the order's possible statuses after each of its operations, and the operations at which
 * every longest such sequence stops, each with the model's reason. Bounded: it walks every prefix, so it
 * gives up on an order with more operations than a drawing can show.
 */

import type { History } from "./history.ts";
import { observationOf, searchOrder } from "./linearization-search.ts";
import {
  cancelAnswer,
  listShows,
  type Observation,
  type OrderStatus,
  type RunChoices,
  startingStatuses,
  step,
} from "./spec-model.ts";

/** More operations of one order than this are not drawn: a drawing of them would not be read anyway. */
export const MAX_DRAWN_OPERATIONS = 16;
/** Prefixes (a set of operations and the statuses after them) walked at most. */
const MAX_PREFIXES = 100_000;

export interface LinearizedStep {
  /** Index into `history.operations`. */
  operation: number;
  /** Its linearization point, in ms: the earliest instant in its span that keeps the order (a stale list's span opens early). */
  atMs: number;
  /** The statuses the order may have after it (more than one when its start or a cancel's effect is unknown). */
  after: readonly OrderStatus[];
}

export interface FailedOperation {
  /** Index into `history.operations`. */
  operation: number;
  /** Why the model cannot take it next, in words: "a 204 though the order was no longer pending". */
  reason: string;
}

export type OrderLinearizationDrawing =
  | {
      orderId: string;
      drawn: true;
      choices: RunChoices;
      /** The statuses the order may start in. */
      start: readonly OrderStatus[];
      /** Its operations (cancels of it, and lists read whole), as indices into `history.operations`. */
      operations: readonly number[];
      /** Whether every operation fits one sequence (a changed record is judged apart, not here). */
      linearizable: boolean;
      /** The longest sequence the model accepts; every operation when linearizable. */
      prefix: readonly LinearizedStep[];
      /** The operations at which the longest sequences stop; empty when linearizable. */
      failures: readonly FailedOperation[];
    }
  | { orderId: string; drawn: false; reason: string };

interface Span {
  operation: number;
  begin: number;
  end: number;
  observation: Observation;
}

/**
 * One order of a history drawn under one combination of the run's choices; lists may be read up to
 * `allowStaleMs` before they began, as the checker allows.
 */
export function partialLinearization(
  history: History,
  orderId: string,
  choices: RunChoices,
  allowStaleMs = 0,
): OrderLinearizationDrawing {
  const spans = spansOf(history, orderId, allowStaleMs);
  if (spans.length > MAX_DRAWN_OPERATIONS)
    return {
      orderId,
      drawn: false,
      reason: `too many operations to draw (${spans.length}, at most ${MAX_DRAWN_OPERATIONS})`,
    };
  const start = startingStatuses(orderId, history.given);
  const found = searchOrder(history, orderId, choices, allowStaleMs);
  const failures = found.linearizable ? [] : failuresOf(spans, start, choices);
  if (failures === undefined)
    return { orderId, drawn: false, reason: "too many operations to draw (too many interleavings)" };
  return {
    orderId,
    drawn: true,
    choices,
    start,
    operations: spans.map((span) => span.operation),
    linearizable: found.linearizable,
    prefix: stepsOf(found.sequence, spans, start, choices),
    failures,
  };
}

/** The order's operations as the search sees them: a stale list's span opens earlier, an unanswered cancel's never closes. */
function spansOf(history: History, orderId: string, allowStaleMs: number): Span[] {
  const spans: Span[] = [];
  history.operations.forEach((operation, index) => {
    const observation = observationOf(operation, orderId);
    if (observation === undefined) return;
    const undecided = observation.op === "cancel-undecided";
    spans.push({
      operation: index,
      begin: observation.op === "list" ? operation.sentAt - allowStaleMs : operation.sentAt,
      end: undecided ? Number.POSITIVE_INFINITY : (operation.answeredAt as number),
      observation,
    });
  });
  return spans;
}

/** The statuses after an operation, following every branch (an undecided cancel may have had no effect). */
function stepAll(
  statuses: readonly OrderStatus[],
  observation: Observation,
  choices: RunChoices,
): OrderStatus[] {
  const next = new Set<OrderStatus>();
  for (const status of statuses) {
    const after = step(status, observation, choices);
    if (after !== null) next.add(after);
    if (observation.op === "cancel-undecided") next.add(status);
  }
  return [...next].sort();
}

function stepsOf(
  sequence: readonly number[],
  spans: readonly Span[],
  start: readonly OrderStatus[],
  choices: RunChoices,
): LinearizedStep[] {
  let statuses = start;
  let point = Number.NEGATIVE_INFINITY;
  return sequence.map((operation) => {
    const span = spans.find((one) => one.operation === operation) as Span;
    // A valid sequence never puts an operation after one sent after it was answered, so this stays within its span.
    point = Math.max(point, span.begin);
    statuses = stepAll(statuses, span.observation, choices);
    return { operation, atMs: point, after: statuses };
  });
}

/**
 * Every prefix the model accepts, walked once per set of operations and statuses: at each that cannot be
 * extended and is as long as the longest, the operations real time lets come next, each refused by the
 * model. Undefined past the bound.
 */
function failuresOf(
  spans: readonly Span[],
  start: readonly OrderStatus[],
  choices: RunChoices,
): FailedOperation[] | undefined {
  let deepest = -1;
  let failed = new Map<number, Set<string>>();
  const seen = new Set<string>();
  const deadEnd = (next: readonly number[], statuses: readonly OrderStatus[], depth: number) => {
    if (depth < deepest) return;
    if (depth > deepest) {
      deepest = depth;
      failed = new Map();
    }
    for (const index of next) {
      const reasons = failed.get(index) ?? new Set<string>();
      failed.set(index, reasons);
      reasons.add(refusal((spans[index] as Span).observation, statuses, choices));
    }
  };
  const walk = (taken: number, statuses: readonly OrderStatus[], depth: number): boolean => {
    const key = `${taken}|${statuses.join(",")}`;
    if (seen.has(key)) return true;
    if (seen.size >= MAX_PREFIXES) return false;
    seen.add(key);
    const next = eligible(spans, taken);
    let extended = false;
    for (const index of next) {
      const after = stepAll(statuses, (spans[index] as Span).observation, choices);
      if (after.length === 0) continue;
      extended = true;
      if (!walk(taken | (1 << index), after, depth + 1)) return false;
    }
    if (!extended && next.length > 0) deadEnd(next, statuses, depth);
    return true;
  };
  if (!walk(0, start, 0)) return undefined;
  return [...failed]
    .map(([index, reasons]) => ({
      operation: (spans[index] as Span).operation,
      reason: [...reasons].join("; or "),
    }))
    .sort((a, b) => a.operation - b.operation);
}

/** The spans not yet taken that may come next: none of the others was answered before it began. */
function eligible(spans: readonly Span[], taken: number): number[] {
  let firstEnd = Number.POSITIVE_INFINITY;
  spans.forEach((span, index) => {
    if (!(taken & (1 << index))) firstEnd = Math.min(firstEnd, span.end);
  });
  const next: number[] = [];
  spans.forEach((span, index) => {
    if (!(taken & (1 << index)) && span.begin <= firstEnd) next.push(index);
  });
  return next;
}

/** Why the model refuses an observation from these statuses, one reason per status it could be in. */
function refusal(observation: Observation, statuses: readonly OrderStatus[], choices: RunChoices): string {
  return [...new Set(statuses.map((status) => refusalFrom(observation, status, choices)))].join("; or ");
}

function refusalFrom(observation: Observation, status: OrderStatus, choices: RunChoices): string {
  if (observation.op === "list") {
    if (observation.shown)
      return status === "cancelled"
        ? "the list showed the order after it was cancelled, and this run's cancelled orders leave the list"
        : "the list showed an order that was absent";
    if (status === "pending") return "the list left out the order while it was still pending";
    if (status === "cancelled")
      return "the list left out the cancelled order, and this run's cancelled orders stay listed";
    return "the list left out an order that was not pending: such an order stays listed";
  }
  if (observation.op !== "cancel") return "a cancel the model cannot place";
  const expected = cancelAnswer(status, choices);
  const got = observation.status;
  if (got === 204 && status === "cancelled") return "a 204 though the order was no longer pending";
  if (got === 204 && status === "shipped")
    return "a 204 for an order that was not pending: the model answers 409";
  if (got === 204) return "a 204 for an absent order: the model answers 404";
  if (status === "pending")
    return `a ${got} while the order was still pending: the model answers 204 and cancels it`;
  if (status === "cancelled")
    return `a ${got} for a cancelled order: this run's second cancels answer ${choices.secondCancelStatus}`;
  return `a ${got} for an order that was ${statusName([status])}: the model answers ${expected}`;
}

/** An order's status in words, with what the run's choices say of it: "cancelled (not pending; leaves the list; a cancel answers 409)". */
export function describeStatus(status: OrderStatus, choices: RunChoices): string {
  const listed = listShows(status, choices) ? "listed" : "not listed";
  const answer = `a cancel answers ${cancelAnswer(status, choices)}`;
  if (status === "pending") return `pending (${listed}; ${answer})`;
  if (status === "cancelled") return `cancelled (not pending; ${listed}; ${answer})`;
  if (status === "shipped") return `not pending (${listed}; ${answer})`;
  return `absent (${listed}; ${answer})`;
}

/** The short name of a status, as a drawing labels it. */
export function statusName(statuses: readonly OrderStatus[]): string {
  return statuses.map((status) => (status === "shipped" ? "not pending" : status)).join(" or ");
}
