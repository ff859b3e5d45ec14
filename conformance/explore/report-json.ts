import type { History } from "../model/history.ts";
import { outcomeOf } from "../reports/outcome.ts";
import type { ExploreResult } from "./explore.ts";
import { findingLinearizations, linearizationJson } from "./finding-linearizations.ts";
import type { PlayedHistory } from "./player.ts";

/**
 * The whole result as JSON: what was searched and covered and, for a finding, the minimal history and the
 * one first found, each operation with `client`, `op`, `orderId`, `sentAt`, `answeredAt` (ms from the
 * history's start), `status` and, for a list read whole, the run's orders it showed with their records.
 */
export function renderExploreJson(result: ExploreResult): string {
  const { finding } = result;
  const outcome = outcomeOf(result);
  return `${JSON.stringify(
    {
      tool: "petstore-conformance explore",
      outcome,
      target: result.target,
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      seed: result.seed,
      clients: result.clients,
      budgetMs: result.budgetMs,
      allowStaleMs: result.allowStaleMs,
      ended: result.ended,
      passed: outcome.verdict === "passed",
      ...(result.interruptedBy !== undefined ? { interrupted: result.interruptedBy } : {}),
      warnings: result.warnings,
      coverage: result.coverage,
      listsNotJudged: result.listsNotJudged,
      largestStaleMs: result.largestStaleMs,
      ...(finding
        ? {
            finding: {
              findings: finding.minimal.verdict.findings,
              choices: finding.choices,
              reproduced: finding.reproduced,
              candidatesTried: finding.candidatesTried,
              originalReproduced: finding.originalReproduced,
              triesPerCandidate: finding.triesPerCandidate,
              shrinkEnded: finding.shrinkEnded,
              program: finding.minimal.program,
              history: historyJson(finding.minimal),
              linearization: linearizationJson(
                findingLinearizations(finding, result.allowStaleMs),
                finding.minimal.history,
              ),
              original: {
                program: finding.original.program,
                findings: finding.original.verdict.findings,
                history: historyJson(finding.original),
              },
            },
          }
        : {}),
    },
    null,
    2,
  )}\n`;
}

/** A history as plain JSON: a list's shown orders as { id: record }, each record its exact JSON text. */
export function historyJson(played: PlayedHistory): object {
  const history: History = played.history;
  return {
    given: history.given,
    choices: played.verdict.choices,
    operations: history.operations.map((operation) =>
      operation.op === "cancel"
        ? operation
        : {
            ...operation,
            shown:
              operation.shown === null
                ? null
                : Object.fromEntries(
                    [...operation.shown].map(([id, record]) => [id, history.records[record] ?? null]),
                  ),
          },
    ),
  };
}
