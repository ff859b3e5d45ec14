/**
 * One order judged under one combination of the run's choices, from its summary (order-summary.ts).
 *
 * Why a summary suffices: in the model an order changes at most once (pending to cancelled, by the one
 * cancel that takes effect), and every other operation leaves it as it is. So a linearization is fixed by
 * the order's starting status and the instant T of that change: an operation that only the status before
 * it explains has its point at or before T, one that only the status after it explains at or after T, and
 * each point lies within its operation's span (linearizability of complete spans is the existence of such
 * points). T exists when the change's cancel began before every "after" operation was answered; a list
 * that only the status before explains and began after that bound read the order stale, by the
 * difference. Lists are the only operations that may be stale: a cancel is a write. A shipping outside
 * the API answers every operation as starting shipped would, so it is judged only where it tells: with the
 * record it may change (judgeRecordChange).
 */

import type { History, HistoryOperation } from "./history.ts";
import type { HistoryRule } from "./linearizability.ts";
import type { OrderSummary, ShownRecord } from "./order-summary.ts";
import { cancelAnswer, listShows, type OrderStatus, type RunChoices } from "./spec-model.ts";

export type OrderOutcome =
  /** Explained once lists may be `staleMs` old (0: explained as it is); `operations`: a stale list and what it missed. */
  | { kind: "pass"; staleMs: number; operations: readonly number[] }
  | { kind: "violation"; rule: HistoryRule; operations: readonly number[] };

const CURRENT: OrderOutcome = { kind: "pass", staleMs: 0, operations: [] };

/** The best outcome over the order's possible starting statuses: explained, and with the least staleness. */
export function judgeOrder(summary: OrderSummary, choices: RunChoices, history: History): OrderOutcome {
  let best: OrderOutcome | undefined;
  for (const start of preferredStarts(summary)) {
    const outcome = judgeFrom(start, summary, choices, history.operations);
    if (best === undefined || better(outcome, best)) best = outcome;
  }
  return best ?? CURRENT;
}

function better(outcome: OrderOutcome, than: OrderOutcome): boolean {
  if (outcome.kind !== "pass") return false;
  return than.kind !== "pass" || outcome.staleMs < than.staleMs;
}

/** Starts in the order whose violation explains best when none passes: a 204 says the order was pending. */
function preferredStarts(summary: OrderSummary): readonly OrderStatus[] {
  if (summary.cancelled.length > 0 || !summary.starts.includes("pending")) return summary.starts;
  return [...summary.starts.filter((start) => start !== "pending"), "pending"];
}

function judgeFrom(
  start: OrderStatus,
  summary: OrderSummary,
  choices: RunChoices,
  operations: readonly HistoryOperation[],
): OrderOutcome {
  return start === "pending"
    ? judgeFromPending(summary, choices, operations)
    : judgeUnchanging(start, summary, choices, operations);
}

function violation(rule: HistoryRule, operations: readonly number[]): OrderOutcome {
  return { kind: "violation", rule, operations };
}

function sent(operations: readonly HistoryOperation[], index: number): number {
  return (operations[index] as HistoryOperation).sentAt;
}

function answered(operations: readonly HistoryOperation[], index: number): number {
  return (operations[index] as HistoryOperation).answeredAt ?? Number.POSITIVE_INFINITY;
}

function bySent(operations: readonly HistoryOperation[], indices: readonly number[]): number[] {
  return [...indices].sort((a, b) => sent(operations, a) - sent(operations, b) || a - b);
}

/** An order that starts not pending, or absent, never changes: each operation must fit that status alone. */
function judgeUnchanging(
  start: OrderStatus,
  summary: OrderSummary,
  choices: RunChoices,
  operations: readonly HistoryOperation[],
): OrderOutcome {
  const expected = cancelAnswer(start, choices);
  const firstCancelled = bySent(operations, summary.cancelled)[0];
  if (firstCancelled !== undefined) {
    const conflict = summary.conflicts.earliestAnswered;
    if (conflict !== -1 && answered(operations, conflict) < sent(operations, firstCancelled))
      return violation("no-cancel-after-conflict", [conflict, firstCancelled]);
    return violation("cancel-answer-matches-state", [firstCancelled]);
  }
  if (expected !== 409 && summary.conflicts.count > 0)
    return violation("cancel-answer-matches-state", [summary.conflicts.earliestAnswered]);
  if (expected !== 404 && summary.notFound.count > 0)
    return violation("cancel-answer-matches-state", [summary.notFound.earliestAnswered]);
  const shows = listShows(start, choices);
  if (shows && summary.unshown.count > 0)
    return violation("listed-orders-stay", [summary.unshown.earliestAnswered]);
  if (!shows && summary.shown.count > 0)
    return violation("absent-order-unlisted", [summary.shown.latestSent]);
  return CURRENT;
}

/** An order that starts pending changes at most once, at T, within the span of the cancel that takes effect. */
function judgeFromPending(
  summary: OrderSummary,
  choices: RunChoices,
  operations: readonly HistoryOperation[],
): OrderOutcome {
  if (summary.cancelled.length > 1)
    return violation("cancel-once", bySent(operations, summary.cancelled).slice(0, 2));
  const afterCancels = choices.secondCancelStatus === 409 ? summary.conflicts : summary.notFound;
  const neither = choices.secondCancelStatus === 409 ? summary.notFound : summary.conflicts;
  if (neither.count > 0) return violation("cancel-answer-matches-state", [neither.earliestAnswered]);
  if (choices.cancelledOrdersListed && summary.unshown.count > 0)
    return violation("listed-orders-stay", [summary.unshown.earliestAnswered]);
  const firstAfter = earliestAnswered(operations, [
    afterCancels.earliestAnswered,
    choices.cancelledOrdersListed ? -1 : summary.unshown.earliestAnswered,
  ]);
  const change = summary.cancelled[0] ?? summary.earliestUndecided;
  if (change === -1)
    return firstAfter === -1 ? CURRENT : violation(ruleBeforeAnyChange(operations, firstAfter), [firstAfter]);
  if (firstAfter !== -1 && answered(operations, firstAfter) < sent(operations, change))
    return violation(ruleBeforeChange(operations, firstAfter), [firstAfter, change]);
  if (choices.cancelledOrdersListed || summary.shown.count === 0) return CURRENT;
  // A cancel that did not tell its effect may take it at any time after it was sent: it bounds nothing.
  const bound = earliestAnswered(operations, [firstAfter, summary.cancelled[0] ?? -1]);
  if (bound === -1) return CURRENT;
  const staleList = summary.shown.latestSent;
  const staleMs = sent(operations, staleList) - answered(operations, bound);
  return staleMs > 0 ? { kind: "pass", staleMs, operations: [bound, staleList] } : CURRENT;
}

/**
 * An order whose lists showed more than one record; undefined when they showed one. The model leaves a
 * record as it is, save at a shipping outside the API (spec-model.ts: shipUnseen), at an instant S: every
 * list of the record before lies at or before S, every list of the record after and every 409 at or after
 * it. A shipping leaves nothing to the run's choices (no cancel takes effect, every list shows the order),
 * so the outcome is the order's under every choice; a list of the record before that began after the
 * bound read it stale.
 */
export function judgeRecordChange(summary: OrderSummary): OrderOutcome | undefined {
  if (summary.changedRecordList === -1) return undefined;
  const changed = violation("cancel-leaves-fields", [summary.firstRecordList, summary.changedRecordList]);
  const [first, second, third] = summary.records;
  if (first === undefined || second === undefined || third !== undefined) return changed;
  // Only a 409 shows that the order left pending; a 204, a 404 or a list without it rules a shipping out.
  const shippingFits =
    summary.mayShipUnseen &&
    summary.conflicts.count > 0 &&
    summary.cancelled.length === 0 &&
    summary.notFound.count === 0 &&
    summary.unshown.count === 0;
  if (!shippingFits) return changed;
  const forwards = shippedBetween(first, second, summary);
  const backwards = shippedBetween(second, first, summary);
  return better(backwards, forwards) ? backwards : forwards;
}

/** The order shipped between the lists of `before` and those of `after`, before the first 409 was answered. */
function shippedBetween(before: ShownRecord, after: ShownRecord, summary: OrderSummary): OrderOutcome {
  const { conflicts } = summary;
  const [bound, boundAt] =
    conflicts.earliestAnsweredAt <= after.lists.earliestAnsweredAt
      ? [conflicts.earliestAnswered, conflicts.earliestAnsweredAt]
      : [after.lists.earliestAnswered, after.lists.earliestAnsweredAt];
  const staleMs = before.lists.latestSentAt - boundAt;
  return staleMs > 0 ? { kind: "pass", staleMs, operations: [bound, before.lists.latestSent] } : CURRENT;
}

function earliestAnswered(operations: readonly HistoryOperation[], candidates: readonly number[]): number {
  let earliest = -1;
  for (const index of candidates)
    if (index !== -1 && (earliest === -1 || answered(operations, index) < answered(operations, earliest)))
      earliest = index;
  return earliest;
}

/** An operation that only a cancelled order explains, in a history where nothing cancelled it. */
function ruleBeforeAnyChange(operations: readonly HistoryOperation[], index: number): HistoryRule {
  return operations[index]?.op === "list" ? "listed-orders-stay" : "cancel-answer-matches-state";
}

/** An operation that only a cancelled order explains, answered before the cancel that changed it began. */
function ruleBeforeChange(operations: readonly HistoryOperation[], index: number): HistoryRule {
  const operation = operations[index] as HistoryOperation;
  if (operation.op === "list") return "listed-orders-stay";
  return operation.status === 409 ? "no-cancel-after-conflict" : "cancel-answer-matches-state";
}
