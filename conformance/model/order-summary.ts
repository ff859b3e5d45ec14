/**
 * What the checker keeps of one order's operations: not the operations themselves but, for each kind of
 * observation, the few that bound where a linearization can put the order's one change (see
 * linearizability.ts for why these suffice). Built in one pass over the history.
 */

import type { History, HistoryOperation, ListOperation } from "./history.ts";
import { cancelStatusDecides, mayShipUnseen, type OrderStatus, startingStatuses } from "./spec-model.ts";

/** Operations of one observation, by index into `history.operations`; -1 when there is none. */
export interface Extremes {
  count: number;
  /** The one sent last. */
  latestSent: number;
  /** The one answered first (every operation kept here was answered). */
  earliestAnswered: number;
  /** Their instants, kept beside them so that a long history is summarised without looking them up. */
  latestSentAt: number;
  earliestAnsweredAt: number;
}

/** One record the lists showed of an order, with those lists. */
export interface ShownRecord {
  record: string | undefined;
  lists: Extremes;
}

/** Distinct records kept per order: a third rules out every explanation, so more say nothing new. */
const RECORDS_KEPT = 3;

export interface OrderSummary {
  orderId: string;
  starts: readonly OrderStatus[];
  /** Whether it may be shipped outside the API during the run (spec-model.ts: mayShipUnseen). */
  mayShipUnseen: boolean;
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
  /** The distinct records lists showed, the first list's first; at most RECORDS_KEPT. */
  records: ShownRecord[];
  /** Whether any operation concerned the order (a cancel of it, a list read whole). */
  concerned: boolean;
}

function noExtremes(): Extremes {
  return {
    count: 0,
    latestSent: -1,
    earliestAnswered: -1,
    latestSentAt: Number.NEGATIVE_INFINITY,
    earliestAnsweredAt: Number.POSITIVE_INFINITY,
  };
}

function widen(extremes: Extremes, index: number, sentAt: number, answeredAt: number): void {
  extremes.count++;
  if (sentAt > extremes.latestSentAt) {
    extremes.latestSent = index;
    extremes.latestSentAt = sentAt;
  }
  if (answeredAt < extremes.earliestAnsweredAt) {
    extremes.earliestAnswered = index;
    extremes.earliestAnsweredAt = answeredAt;
  }
}

function emptySummary(orderId: string, given: History["given"]): OrderSummary {
  return {
    orderId,
    starts: startingStatuses(orderId, given),
    mayShipUnseen: mayShipUnseen(orderId, given),
    cancelled: [],
    conflicts: noExtremes(),
    notFound: noExtremes(),
    earliestUndecided: -1,
    shown: noExtremes(),
    unshown: noExtremes(),
    firstRecordList: -1,
    changedRecordList: -1,
    records: [],
    concerned: false,
  };
}

/** One summary per order the run was given, in the order given; ids it was not given are left out. */
export function summariseOrders(history: History): OrderSummary[] {
  const { given } = history;
  const byId = new Map<string, OrderSummary>();
  for (const orderId of [...given.pending, ...given.shipped, ...given.missing, ...given.unknown])
    if (!byId.has(orderId)) byId.set(orderId, emptySummary(orderId, given));
  const summaries = [...byId.values()];
  history.operations.forEach((operation, index) => {
    if (!(operation.sentAt <= (operation.answeredAt ?? Number.POSITIVE_INFINITY)))
      throw new RangeError(
        `operation #${index} of the history was answered before it was sent, or has no time`,
      );
    if (operation.op === "cancel") {
      const summary = byId.get(operation.orderId);
      if (summary !== undefined) addCancel(summary, index, history.operations);
    } else if (operation.status === 200 && operation.shown !== null && operation.answeredAt !== null) {
      for (const summary of summaries) addList(summary, index, operation, history);
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
  else if (operation.status === 409) widen(summary.conflicts, index, operation.sentAt, operation.answeredAt);
  else if (operation.status === 404) widen(summary.notFound, index, operation.sentAt, operation.answeredAt);
}

function addList(summary: OrderSummary, index: number, operation: ListOperation, history: History): void {
  summary.concerned = true;
  const answeredAt = operation.answeredAt as number;
  const record = operation.shown?.get(summary.orderId);
  if (record === undefined) {
    widen(summary.unshown, index, operation.sentAt, answeredAt);
    return;
  }
  widen(summary.shown, index, operation.sentAt, answeredAt);
  const text = history.records[record];
  let shownRecord = summary.records.find((kept) => kept.record === text);
  if (shownRecord === undefined && summary.records.length < RECORDS_KEPT) {
    shownRecord = { record: text, lists: noExtremes() };
    summary.records.push(shownRecord);
  }
  if (shownRecord !== undefined) widen(shownRecord.lists, index, operation.sentAt, answeredAt);
  if (summary.firstRecordList === -1) summary.firstRecordList = index;
  else if (summary.changedRecordList === -1 && summary.records[0]?.record !== text)
    summary.changedRecordList = index;
}
