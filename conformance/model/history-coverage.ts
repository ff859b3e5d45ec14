/**
 * How much real concurrency a history holds, so that a pass over a slow link is not over-read. Two
 * operations overlap when neither was answered before the other was sent; one never answered overlaps
 * everything sent after it.
 */

import type { History, HistoryOperation } from "./history.ts";
import type { HistoryCoverage } from "./linearizability.ts";
import type { OrderSummary } from "./order-summary.ts";

/** Spans gathered as two columns, so that a long history costs no object per operation. */
class Spans {
  readonly starts: number[] = [];
  readonly ends: number[] = [];

  add(operation: HistoryOperation): void {
    this.starts.push(operation.sentAt);
    this.ends.push(operation.answeredAt ?? Number.POSITIVE_INFINITY);
  }

  get size(): number {
    return this.starts.length;
  }

  sortedStarts(): Float64Array {
    return Float64Array.from(this.starts).sort();
  }

  sortedEnds(): Float64Array {
    return Float64Array.from(this.ends).sort();
  }
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
function overlappingPairsWithin(spans: Spans): number {
  const all = (spans.size * (spans.size - 1)) / 2;
  return all - pairsInSequence(spans.sortedEnds(), spans.sortedStarts());
}

export function historyCoverage(history: History, summaries: readonly OrderSummary[]): HistoryCoverage {
  const cancelsByOrder = new Map<string, Spans>(summaries.map((summary) => [summary.orderId, new Spans()]));
  const lists = new Spans();
  const cancels = new Spans();
  for (const operation of history.operations) {
    if (operation.op === "list") {
      if (operation.status === 200 && operation.shown !== null && operation.answeredAt !== null)
        lists.add(operation);
      continue;
    }
    const spans = cancelsByOrder.get(operation.orderId);
    if (spans === undefined) continue;
    spans.add(operation);
    cancels.add(operation);
  }
  const cancelEnds = cancels.sortedEnds();
  const cancelStarts = cancels.sortedStarts();
  let listsConcurrentWithCancels = 0;
  for (let index = 0; index < lists.size; index++) {
    const endedBefore = countBelow(cancelEnds, lists.starts[index] as number);
    const startedLater = startedAfter(cancelStarts, lists.ends[index] as number);
    if (cancels.size - endedBefore - startedLater > 0) listsConcurrentWithCancels++;
  }
  let concurrentPairs = 0;
  for (const spans of cancelsByOrder.values()) concurrentPairs += overlappingPairsWithin(spans);
  concurrentPairs +=
    lists.size * cancels.size -
    pairsInSequence(lists.sortedEnds(), cancelStarts) -
    pairsInSequence(cancelEnds, lists.sortedStarts());
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
