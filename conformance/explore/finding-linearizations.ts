import type { History } from "../model/history.ts";
import {
  describeStatus,
  type OrderLinearizationDrawing,
  partialLinearization,
  statusName,
} from "../model/partial-linearization.ts";
import { ALL_RUN_CHOICES, type OrderStatus, type RunChoices } from "../model/spec-model.ts";
import type { ShrunkFinding } from "./shrink.ts";
import type { Timeline } from "./timeline.ts";

/**
 * For each order a finding names, where its linearizations fail in the minimal history: under the run's
 * choices the history was judged by, with the staleness the run allowed.
 */
export function findingLinearizations(
  finding: ShrunkFinding,
  allowStaleMs: number,
): OrderLinearizationDrawing[] {
  const { history, verdict } = finding.minimal;
  const choices = drawnChoices(finding);
  const orders = [...new Set(verdict.findings.map((one) => one.orderId))];
  return orders.map((orderId) => partialLinearization(history, orderId, choices, allowStaleMs));
}

/**
 * The choices the finding's headline names (`finding.choices`, what the whole run left possible), the
 * first of them the minimal history was also judged under when there is one: one story in every report.
 */
export function drawnChoices(finding: ShrunkFinding): RunChoices {
  const judged = finding.minimal.verdict.choices;
  const same = (a: RunChoices, b: RunChoices) =>
    a.cancelledOrdersListed === b.cancelledOrdersListed && a.secondCancelStatus === b.secondCancelStatus;
  return (
    finding.choices.find((choices) => judged.some((other) => same(choices, other))) ??
    finding.choices[0] ??
    judged[0] ??
    (ALL_RUN_CHOICES[0] as RunChoices)
  );
}

/** An operation as the timeline labels it: "#1 list → 200: shows A". */
export function operationLabel(timeline: Timeline, index: number): string {
  for (const lane of timeline.lanes)
    for (const bar of lane.bars) if (bar.index === index) return `#${index} ${bar.label}`;
  return `#${index}`;
}

/**
 * Where an order's linearizations fail, in two lines: the longest sequence the model accepts with the
 * status each step leaves, then each operation at which every linearization fails and why.
 */
export function linearizationLines(drawing: OrderLinearizationDrawing, timeline: Timeline): string[] {
  const name = timeline.names.get(drawing.orderId) ?? drawing.orderId;
  if (!drawing.drawn) return [`linearizations of ${name}: not drawn, ${drawing.reason}`];
  if (drawing.linearizable)
    return [
      `linearizations of ${name}: every operation fits one sequence; what breaks the rule is its record`,
    ];
  const steps = drawing.prefix.map((step) => `#${step.operation} (→ ${statusName(step.after)})`);
  const last = drawing.prefix[drawing.prefix.length - 1]?.after ?? drawing.start;
  const fits =
    steps.length > 0
      ? `longest linearization of ${name}: ${steps.join(", ")}; then ${name} is ${describeStates(last, drawing.choices)}`
      : `no operation of ${name} can come first: ${name} starts ${describeStates(last, drawing.choices)}`;
  const failures = drawing.failures
    .map((failure) => `${operationLabel(timeline, failure.operation)} (${failure.reason})`)
    .join("; ");
  return [fits, `every linearization of ${name} fails at one of: ${failures}`];
}

/** Statuses in words with what the run's choices say of them. */
export function describeStates(statuses: readonly OrderStatus[], choices: RunChoices): string {
  return statuses.map((status) => describeStatus(status, choices)).join(" or ");
}

/** The same for a report that reads no text: per order, its prefix and failures with order ids exact. */
export function linearizationJson(
  drawings: readonly OrderLinearizationDrawing[],
  history: History,
): object[] {
  return drawings.map((drawing) => {
    if (!drawing.drawn) return { orderId: drawing.orderId, drawn: false, reason: drawing.reason };
    return {
      orderId: drawing.orderId,
      drawn: true,
      choices: drawing.choices,
      start: drawing.start,
      linearizable: drawing.linearizable,
      prefix: drawing.prefix.map((step) => ({
        operation: step.operation,
        op: history.operations[step.operation]?.op,
        atMs: step.atMs,
        after: step.after,
      })),
      failures: drawing.failures,
    };
  });
}
