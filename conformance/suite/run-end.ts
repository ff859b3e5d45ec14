import type { Report, ScenarioResult } from "../reports/report.ts";
import { errorReportOf, summarize } from "../reports/report.ts";
import type { Scenario } from "./scenarios.ts";

/** Where a run stood when it stopped short: when it started, and what it had sent and played. */
export interface RunProgress {
  target: string;
  startedAt: string;
  /** performance.now() at the start. */
  started: number;
  requests: number;
  /** Scenarios played to their end, as played (before the state rules that compare the run's lists). */
  played: ScenarioResult[];
}

/** The report of a run that could not judge the target (exit 2): the one error, and nothing judged. */
export function errorReport(progress: RunProgress, message: string): Report {
  return errorReportOf(frame(progress), message);
}

/**
 * The report of a run a stop signal ended: the scenarios played before it, and the others skipped as not
 * played. The state rules, which compare the list before and after the whole run, are not judged.
 */
export function interruptedReport(
  progress: RunProgress,
  signal: NodeJS.Signals,
  scenarios: readonly Scenario[],
): Report {
  const played = new Map(progress.played.map((result) => [result.id, result]));
  const results = scenarios.map(
    (scenario): ScenarioResult =>
      played.get(scenario.id) ?? {
        id: scenario.id,
        title: scenario.title,
        status: "skipped",
        reason: `not played: the run was interrupted by ${signal}`,
        checks: [],
      },
  );
  return {
    ...frame(progress),
    summary: summarize(results),
    ended: {
      kind: "interrupted",
      message: `the run was interrupted by ${signal}`,
      judged: `${played.size} of ${scenarios.length} scenarios were played before the stop; the state rules across the run were not judged`,
      signal,
    },
    scenarios: results,
  };
}

function frame(progress: RunProgress) {
  return {
    target: progress.target,
    startedAt: progress.startedAt,
    warnings: [],
    requests: progress.requests,
    retries: 0,
    durationMs: Math.round(performance.now() - progress.started),
  };
}
