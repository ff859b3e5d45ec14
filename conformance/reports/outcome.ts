import { signalExitCode } from "../../common/stop-signals.ts";
import type { Report } from "./report.ts";

/**
 * How a run ended, from worst to best: an error kept it from judging; a stop signal cut it short; the
 * command the proxy wrapped failed; the run still goes on (a proxy's checkpoint); a check failed; not everything was checked (a limit, an answer that was not whole, an upstream that did not
 * answer, a fault of the proxy's own); nothing was judged at all (observed traffic only); or it passed.
 */
export type Verdict =
  | "error"
  | "interrupted"
  | "command failed"
  | "running"
  | "failed"
  | "partial"
  | "nothing judged"
  | "passed";

export interface RunOutcome {
  verdict: Verdict;
  /** What every report's headline says: "passed" only for a pass. */
  headline: string;
  /** Why the run is not a pass, one line each; empty for a pass and for a failure (its checks say why). */
  reasons: string[];
}

/**
 * The one reading of a report's outcome: every reporter's headline and the exit code come from it, so no
 * report says passed on a run that does not exit 0.
 */
export function outcomeOf(report: Report): RunOutcome {
  if (report.ended) {
    const verdict = report.ended.kind;
    return { verdict, headline: verdict, reasons: [report.ended.message] };
  }
  const { failed } = report.summary;
  if (failed > 0) return { verdict: "failed", headline: `${failed} failed`, reasons: [] };
  const reasons = notCheckedReasons(report);
  if (reasons.length > 0) return { verdict: "partial", headline: "not everything checked", reasons };
  if (report.traffic && report.traffic.judged === 0)
    return {
      verdict: "nothing judged",
      headline: "nothing judged",
      reasons: ["no exchange was judged, so nothing was checked"],
    };
  return { verdict: "passed", headline: "passed", reasons: [] };
}

/**
 * The exit code a gate gives the run: 0 only for a pass; 2 for an error or a run not checked whole.
 * `outcome`: the report's, when the caller has read it already.
 */
export function gateExitCode(report: Report, outcome: RunOutcome = outcomeOf(report)): number {
  switch (outcome.verdict) {
    case "error":
    case "partial":
    case "running":
      return 2;
    case "interrupted":
      return signalExitCode(report.ended?.signal ?? "SIGINT");
    case "command failed":
      return report.ended?.exitCode || 1;
    case "failed":
    case "nothing judged":
      return 1;
    case "passed":
      return 0;
  }
}

function notCheckedReasons(report: Report): string[] {
  const reasons: string[] = [];
  const notJudgedChecks = report.scenarios.reduce(
    (count, scenario) => count + scenario.checks.filter((check) => check.notJudged).length,
    0,
  );
  if (notJudgedChecks > 0)
    reasons.push(
      `${count(notJudgedChecks, "check was", "checks were")} not judged whole (a limit named in the report: raise it)`,
    );
  const traffic = report.traffic;
  if (!traffic) return reasons;
  if (traffic.faults > 0)
    reasons.push(
      `the proxy itself failed ${traffic.faults === 1 ? "once" : `${traffic.faults} times`} (see the report's warnings)`,
    );
  if (traffic.upstreamFailures > 0)
    reasons.push(
      `${count(traffic.upstreamFailures, "request", "requests")} got no whole answer from the upstream, so ${traffic.upstreamFailures === 1 ? "it was" : "they were"} not judged whole${traffic.firstUpstreamFailure ? `: ${traffic.firstUpstreamFailure}` : ""}`,
    );
  if (traffic.notWhole > 0)
    reasons.push(
      `${count(traffic.notWhole, "exchange", "exchanges")} ended without a whole answer (cut at the stop, by --deadline, by the client leaving, or by the upstream: named in the report), so what came was judged in part at most`,
    );
  const forLimits = traffic.judgedInPart - traffic.notWhole;
  if (forLimits > 0)
    reasons.push(
      `${count(forLimits, "exchange was", "exchanges were")} judged only in part or not at all, for a limit (named in the report: raise it)`,
    );
  return reasons;
}

function count(n: number, one: string, many: string): string {
  return n === 1 ? `1 ${one}` : `${n} ${many}`;
}
