/**
 * How much real concurrency a history holds, so that a pass over a slow link is not over-read. Two
 * operations overlap when neither was answered before the other was sent; one never answered overlaps
 * everything sent after it.
 */

import type { History, HistoryOperation } from "./history.ts";
import type { HistoryCoverage } from "./linearizability.ts";
import type { OrderSummary } from "./order-summary.ts";

interface Span {
  start: number;
  end: number;
}

function spanOf(operation: HistoryOperation): Span {
  return { start: operation.sentAt, end: operation.answeredAt ?? Number.POSITIVE_INFINITY };
}

function ascending(values: number[]): Float64Array {
  return Float64Array.from(values).sort();
}

/** How many of the sorted values are below the bound. */
function countBelow(sorted: Float64Array, bound: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as number) < bound) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Pairs (a from `first`, b from `second`) where a was answered before b was sent. */
function pairsInSequence(firstEnds: Float64Array, secondStarts: Float64Array): number {
  let pairs = 0;
  for (const start of secondStarts) pairs += countBelow(firstEnds, start);
  return pairs;
}

/** Pairs of spans of one set that overlap: all pairs but those where one ended before the other began. */
function overlappingPairsWithin(spans: readonly Span[]): number {
  const all = (spans.length * (spans.length - 1)) / 2;
  return all - pairsInSequence(ascending(spans.map((s) => s.end)), ascending(spans.map((s) => s.start)));
}

export function historyCoverage(history: History, summaries: readonly OrderSummary[]): HistoryCoverage {
  const judged = new Set(summaries.map((summary) => summary.orderId));
  const cancelsByOrder = new Map<string, Span[]>();
  const lists: Span[] = [];
  for (const operation of history.operations) {
    if (operation.op === "list") {
      if (operation.status === 200 && operation.shown !== null && operation.answeredAt !== null)
        lists.push(spanOf(operation));
    } else if (judged.has(operation.orderId)) {
      const spans = cancelsByOrder.get(operation.orderId) ?? [];
      spans.push(spanOf(operation));
      cancelsByOrder.set(operation.orderId, spans);
    }
  }
  const cancels = [...cancelsByOrder.values()].flat();
  const cancelEnds = ascending(cancels.map((s) => s.end));
  const cancelStarts = ascending(cancels.map((s) => s.start));
  let listsConcurrentWithCancels = 0;
  for (const list of lists) {
    const endedBefore = countBelow(cancelEnds, list.start);
    if (cancels.length - endedBefore - startedAfter(cancelStarts, list.end) > 0) listsConcurrentWithCancels++;
  }
  let concurrentPairs = 0;
  for (const spans of cancelsByOrder.values()) concurrentPairs += overlappingPairsWithin(spans);
  const listEnds = ascending(lists.map((s) => s.end));
  const listStarts = ascending(lists.map((s) => s.start));
  concurrentPairs +=
    lists.length * cancels.length -
    pairsInSequence(listEnds, cancelStarts) -
    pairsInSequence(cancelEnds, listStarts);
  return {
    operations: history.operations.length,
    ordersJudged: summaries.filter((summary) => summary.concerned).length,
    concurrentPairs,
    listsConcurrentWithCancels,
  };
}

/** How many of the sorted starts lie strictly after the bound. */
function startedAfter(sortedStarts: Float64Array, bound: number): number {
  let low = 0;
  let high = sortedStarts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sortedStarts[middle] as number) <= bound) low = middle + 1;
    else high = middle;
  }
  return sortedStarts.length - low;
}
