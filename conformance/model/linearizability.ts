/**
 * Whether a concurrent history can be explained by the spec's model (spec-model.ts): for each order apart
 * (P-compositionality: its cancels, and every list projected onto it), one sequential order of its
 * operations, consistent with real time, that the model accepts; the run's open choices are decided once
 * for every order.
 */

import type { History } from "./history.ts";
import { historyCoverage } from "./history-coverage.ts";
import { type OrderSummary, summariseOrders } from "./order-summary.ts";
import { judgeOrder, judgeRecordChange, type OrderOutcome } from "./order-verdict.ts";
import { ALL_RUN_CHOICES, type RunChoices } from "./spec-model.ts";
import { STATE_RULE_CATALOGUE, type StateRuleOf } from "./state-rule-catalogue.ts";

/** The rules a history finding names (conformance/model/state-rule-catalogue.ts). */
export type HistoryRule = StateRuleOf<"history">;

export interface HistoryFinding {
  /**
   * `violation`: no order of the operations explains them, however stale a list may be (two 204s, a 204
   * after a 409, an order that vanished without a 204, a record changed other than once at a shipping that
   * a 409 followed). `stale`: they are explained once lists may show the order as it was a while before
   * they began (a read replica that lags).
   */
  kind: "violation" | "stale";
  rule: HistoryRule;
  orderId: string;
  /** The operations that cannot be put in one order, as indices into `history.operations`, earliest sent first. */
  operations: readonly number[];
  /** The spec sections and reason, from the catalogue. */
  spec: string;
  /** For a stale read: how much earlier than it began the list must have read the order to be explained, in ms. */
  staleMs?: number;
}

export interface HistoryCoverage {
  /** Operations in the history. */
  operations: number;
  /** Orders the run was given that an operation concerned (a cancel of it, or a list read whole). */
  ordersJudged: number;
  /** Pairs of operations overlapping in time that concern one judged order (two cancels of it, or a list and a cancel of it). */
  concurrentPairs: number;
  /** Lists read whole that overlap in time at least one cancel of a judged order. */
  listsConcurrentWithCancels: number;
}

export interface HistoryVerdict {
  /** True when no finding is left (stale reads within `allowStaleMs` are not findings). */
  ok: boolean;
  findings: readonly HistoryFinding[];
  /**
   * The run's open choices under which the verdict holds: every combination that explains all orders
   * (within `allowStaleMs`; records are judged apart, the same under all), otherwise the one that leaves
   * the fewest violations, then the smallest staleness.
   */
  choices: readonly RunChoices[];
  /**
   * The combinations (of those it was judged under) that explain every order once lists may be as stale
   * as needed: what this history shows of the run's choices, whatever its stale reads. Empty when none does
   * (a changed record that no shipping explains is explained under none).
   */
  consistentChoices: readonly RunChoices[];
  /** The largest staleness a list needed under the chosen choices, in ms; 0 when every list was current. */
  largestStaleMs: number;
  coverage: HistoryCoverage;
}

export interface CheckOptions {
  /** A list may show an order as it was up to this many ms before the list began (bounded staleness); default 0. */
  allowStaleMs?: number;
  /**
   * The combinations of the run's open choices still possible, as earlier histories of the same run left
   * them (default: all). A history is judged under these only, so that a choice one history shows (cancelled
   * orders leave the list) holds for a history that does not show it.
   */
  choices?: readonly RunChoices[];
}

/**
 * Judges a history against the spec's model. Each order is judged apart under each combination of the
 * run's choices (order-verdict.ts says how); the run passes under a combination that explains every
 * order, with no list staler than `allowStaleMs`. A finding is a violation when no staleness would
 * explain the order, and a stale read when some would.
 */
export function checkHistory(history: History, options: CheckOptions = {}): HistoryVerdict {
  const allowStaleMs = options.allowStaleMs ?? 0;
  const summaries = summariseOrders(history);
  const possible =
    options.choices !== undefined && options.choices.length > 0 ? options.choices : ALL_RUN_CHOICES;
  const recordChanges = new Map(summaries.map((summary) => [summary.orderId, judgeRecordChange(summary)]));
  const underEach = possible.map((choices) => judgeUnder(choices, summaries, recordChanges, history));
  const passing = underEach.filter((run) => run.violations === 0 && run.largestStaleMs <= allowStaleMs);
  const candidates = passing.length > 0 ? passing : underEach;
  const chosen = candidates.reduce((best, run) => (fewerFindings(run, best) ? run : best));
  const changed = changedRecords(recordChanges, history);
  const findings = [...changed, ...findingsOf(chosen, allowStaleMs, history)];
  return {
    ok: findings.length === 0,
    findings,
    choices: passing.length > 0 ? passing.map((run) => run.choices) : [chosen.choices],
    consistentChoices:
      changed.length > 0 ? [] : underEach.filter((run) => run.violations === 0).map((run) => run.choices),
    largestStaleMs: chosen.largestStaleMs,
    coverage: historyCoverage(history, summaries),
  };
}

interface JudgedRun {
  choices: RunChoices;
  outcomes: ReadonlyArray<{ orderId: string; outcome: OrderOutcome }>;
  violations: number;
  largestStaleMs: number;
}

/** A record change a shipping explains decides the order's outcome: the same under every choice. */
function judgeUnder(
  choices: RunChoices,
  summaries: readonly OrderSummary[],
  recordChanges: ReadonlyMap<string, OrderOutcome | undefined>,
  history: History,
): JudgedRun {
  let violations = 0;
  let largestStaleMs = 0;
  const outcomes = summaries.map((summary) => {
    const shipped = recordChanges.get(summary.orderId);
    const outcome = shipped?.kind === "pass" ? shipped : judgeOrder(summary, choices, history);
    if (outcome.kind === "violation") violations++;
    else largestStaleMs = Math.max(largestStaleMs, outcome.staleMs);
    return { orderId: summary.orderId, outcome };
  });
  return { choices, outcomes, violations, largestStaleMs };
}

function fewerFindings(run: JudgedRun, than: JudgedRun): boolean {
  if (run.violations !== than.violations) return run.violations < than.violations;
  return run.largestStaleMs < than.largestStaleMs;
}

function finding(
  kind: HistoryFinding["kind"],
  rule: HistoryRule,
  orderId: string,
  operations: readonly number[],
  history: History,
): HistoryFinding {
  const bySent = [...operations].sort(
    (a, b) => (history.operations[a]?.sentAt ?? 0) - (history.operations[b]?.sentAt ?? 0) || a - b,
  );
  return { kind, rule, orderId, operations: bySent, spec: STATE_RULE_CATALOGUE[rule].spec };
}

function findingsOf(run: JudgedRun, allowStaleMs: number, history: History): HistoryFinding[] {
  const findings: HistoryFinding[] = [];
  for (const { orderId, outcome } of run.outcomes) {
    if (outcome.kind === "violation")
      findings.push(finding("violation", outcome.rule, orderId, outcome.operations, history));
    else if (outcome.staleMs > allowStaleMs)
      findings.push({
        ...finding("stale", "stale-read", orderId, outcome.operations, history),
        staleMs: outcome.staleMs,
      });
  }
  return findings;
}

/**
 * The model changes a record only at a shipping outside the API: two lists that show one order with
 * different records break it in any order, unless such a shipping explains them (order-verdict.ts).
 */
function changedRecords(
  recordChanges: ReadonlyMap<string, OrderOutcome | undefined>,
  history: History,
): HistoryFinding[] {
  const findings: HistoryFinding[] = [];
  for (const [orderId, outcome] of recordChanges)
    if (outcome?.kind === "violation")
      findings.push(finding("violation", outcome.rule, orderId, outcome.operations, history));
  return findings;
}

/**
 * One line for a finding, the same wherever it is printed (explore, the proxy): the rule, the order, each
 * operation (client, op, status, times) and the spec sections.
 */
export function describeFinding(finding: HistoryFinding, history: History): string {
  const operations = finding.operations
    .map((index) => describeOperation(index, finding.orderId, history))
    .join("; ");
  const stale = finding.staleMs === undefined ? "" : `, at least ${formatMs(finding.staleMs)} stale`;
  const kind = finding.kind === "stale" ? "stale read" : "violation";
  return `${finding.rule} (${kind}${stale}): order ${finding.orderId}: ${operations} (${finding.spec})`;
}

function describeOperation(index: number, orderId: string, history: History): string {
  const operation = history.operations[index];
  if (operation === undefined) return `#${index}`;
  const status = operation.status === null ? "no answer" : String(operation.status);
  const what =
    operation.op === "cancel"
      ? `cancel ${status}`
      : `list ${status} ${operation.shown?.has(orderId) ? "with it" : "without it"}`;
  const end = operation.answeredAt === null ? "…" : formatMs(operation.answeredAt);
  return `#${index} client ${operation.client} ${what} ${formatMs(operation.sentAt)}–${end}`;
}

/**
 * The choices both sets allow; the first set when they share none (a run whose histories disagree: the
 * later history's findings say how).
 */
export function commonChoices(
  sofar: readonly RunChoices[],
  verdictChoices: readonly RunChoices[],
): readonly RunChoices[] {
  const same = (a: RunChoices, b: RunChoices) =>
    a.cancelledOrdersListed === b.cancelledOrdersListed && a.secondCancelStatus === b.secondCancelStatus;
  const both = sofar.filter((choices) => verdictChoices.some((other) => same(choices, other)));
  return both.length > 0 ? both : sofar;
}

/** The run's open choices in words, for a report that says under which a verdict holds. */
export function describeChoices(choices: RunChoices): string {
  const listed = choices.cancelledOrdersListed ? "stay listed" : "leave the list";
  return `cancelled orders ${listed}, a second cancel answers ${choices.secondCancelStatus}`;
}

function formatMs(ms: number): string {
  return `${Number.isInteger(ms) ? ms : ms.toFixed(1)} ms`;
}
