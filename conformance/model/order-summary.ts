/**
 * What the checker keeps of one order's operations: not the operations themselves but, for each kind of
 * observation, the few that bound where a linearization can put the order's one change (see
 * linearizability.ts for why these suffice). Built in one pass over the history.
 */

import type { History, HistoryOperation } from "./history.ts";
import { cancelStatusDecides, type OrderStatus, startingStatuses } from "./spec-model.ts";

/** Operations of one observation, by index into `history.operations`; -1 when there is none. */
export interface Extremes {
  count: number;
  /** The one sent last. */
  latestSent: number;
  /** The one answered first (every operation kept here was answered). */
  earliestAnswered: number;
}

export interface OrderSummary {
  orderId: string;
  starts: readonly OrderStatus[];
  /** Cancels answered 204, in the history's order. */
  cancelled: number[];
  /** Cancels answered 409 and 404. */
  conflicts: Extremes;
  notFound: Extremes;
  /** The cancel with no answer, or with one that does not tell its effect, sent first; -1 when none. */
  earliestUndecided: number;
  /** Lists read whole that showed the order, and that did not. */
  shown: Extremes;
  unshown: Extremes;
  /** The first list that showed the order, and the first that showed it with another record; -1 when none. */
  firstRecordList: number;
  changedRecordList: number;
  /** Whether any operation concerned the order (a cancel of it, a list read whole). */
  concerned: boolean;
}

function noExtremes(): Extremes {
  return { count: 0, latestSent: -1, earliestAnswered: -1 };
}

function widen(extremes: Extremes, index: number, operations: readonly HistoryOperation[]): void {
  const operation = operations[index] as HistoryOperation;
  extremes.count++;
  const latest = operations[extremes.latestSent];
  if (latest === undefined || operation.sentAt > latest.sentAt) extremes.latestSent = index;
  const earliest = operations[extremes.earliestAnswered];
  if (earliest === undefined || (operation.answeredAt as number) < (earliest.answeredAt as number))
    extremes.earliestAnswered = index;
}

function emptySummary(orderId: string, starts: readonly OrderStatus[]): OrderSummary {
  return {
    orderId,
    starts,
    cancelled: [],
    conflicts: noExtremes(),
    notFound: noExtremes(),
    earliestUndecided: -1,
    shown: noExtremes(),
    unshown: noExtremes(),
    firstRecordList: -1,
    changedRecordList: -1,
    concerned: false,
  };
}

/** One summary per order the run was given, in the order given; ids it was not given are left out. */
export function summariseOrders(history: History): OrderSummary[] {
  const { given } = history;
  const byId = new Map<string, OrderSummary>();
  for (const orderId of [...given.pending, ...given.shipped, ...given.missing, ...given.unknown])
    if (!byId.has(orderId)) byId.set(orderId, emptySummary(orderId, startingStatuses(orderId, given)));
  const summaries = [...byId.values()];
  history.operations.forEach((operation, index) => {
    if (operation.op === "cancel") {
      const summary = byId.get(operation.orderId);
      if (summary !== undefined) addCancel(summary, index, history.operations);
    } else if (operation.status === 200 && operation.shown !== null && operation.answeredAt !== null) {
      for (const summary of summaries) addList(summary, index, history);
    }
  });
  return summaries;
}

function addCancel(summary: OrderSummary, index: number, operations: readonly HistoryOperation[]): void {
  const operation = operations[index] as HistoryOperation;
  summary.concerned = true;
  if (!cancelStatusDecides(operation.status) || operation.answeredAt === null) {
    const earliest = operations[summary.earliestUndecided];
    if (earliest === undefined || operation.sentAt < earliest.sentAt) summary.earliestUndecided = index;
  } else if (operation.status === 204) summary.cancelled.push(index);
  else if (operation.status === 409) widen(summary.conflicts, index, operations);
  else if (operation.status === 404) widen(summary.notFound, index, operations);
}

function addList(summary: OrderSummary, index: number, history: History): void {
  const operation = history.operations[index] as HistoryOperation & { op: "list" };
  summary.concerned = true;
  const record = operation.shown?.get(summary.orderId);
  if (record === undefined) {
    widen(summary.unshown, index, history.operations);
    return;
  }
  widen(summary.shown, index, history.operations);
  if (summary.firstRecordList === -1) summary.firstRecordList = index;
  else if (
    summary.changedRecordList === -1 &&
    recordOf(history, summary, summary.firstRecordList) !== history.records[record]
  )
    summary.changedRecordList = index;
}

function recordOf(history: History, summary: OrderSummary, listIndex: number): string | undefined {
  const operation = history.operations[listIndex] as HistoryOperation & { op: "list" };
  const record = operation.shown?.get(summary.orderId);
  return record === undefined ? undefined : history.records[record];
}
