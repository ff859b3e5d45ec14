import type { History, HistoryOperation } from "../../model/history.ts";
import type { HistoryFinding, HistoryRule } from "../../model/linearizability.ts";
import type { ExchangeRef } from "./traffic-rule.ts";

/**
 * How the proxy words a finding: what happened to the order, then the exchanges that show it by their
 * numbers in the traffic, each with when it came in and when its answer was over. One rule reads the same
 * whether a traffic rule or the spec's model (live-history.ts) found it.
 */

/** What a finding under each rule says happened to the order. */
export const WHAT_HAPPENED: Record<HistoryRule, string> = {
  "cancel-once": "was cancelled twice",
  "no-cancel-after-conflict": "was cancelled after a 409 said it could not be",
  "listed-orders-stay": "left the list with no cancel to explain it",
  "cancel-leaves-fields": "changed when it was cancelled",
  "cancel-answer-matches-state": "got answers that no state of it explains, in any order the traffic allows",
  "absent-order-unlisted": "was listed though a cancel said the store does not have it (404)",
  "stale-read": "was listed as it was before a cancel of it was answered",
};

/** `#4 DELETE /v1/store/orders/5 → 204 (681.7–684.2 ms)`: ms from the proxy's start. */
export function exchangeWords(ref: ExchangeRef, answeredAt: number | null = ref.endedAt): string {
  return `${ref.label} (${ms(ref.startedAt)}–${answeredAt === null ? "no answer" : ms(answeredAt)} ms)`;
}

/** A finding of the spec's model in an order's story, `refs` naming the exchange of each operation. */
export function storyFindingWords(
  finding: HistoryFinding,
  history: History,
  refs: readonly ExchangeRef[],
): string {
  const stale = finding.staleMs === undefined ? "" : ` (at least ${ms(finding.staleMs)} ms stale)`;
  const exchanges = finding.operations.map((index) =>
    operationWords(history.operations[index], refs[index], finding.orderId),
  );
  return `order ${finding.orderId} ${WHAT_HAPPENED[finding.rule]}${stale}: ${exchanges.join(", ")}`;
}

function operationWords(
  operation: HistoryOperation | undefined,
  ref: ExchangeRef | undefined,
  orderId: string,
): string {
  if (ref === undefined) return "an exchange the story no longer holds";
  // A cancel standing for others still in flight, or forgotten: its label says which.
  if (operation === undefined || operation.client < 0) return ref.label;
  if (operation.op === "cancel") return exchangeWords(ref, operation.answeredAt);
  const listed = operation.shown?.has(orderId) ? "listing it" : "not listing it";
  return `${ref.label}, ${listed} (${ms(ref.startedAt)}–${ms(ref.endedAt)} ms)`;
}

function ms(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}
