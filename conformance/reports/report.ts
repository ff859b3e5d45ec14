import type { Replay } from "./reproduction.ts";

export type Outcome = "passed" | "failed" | "skipped";

export interface RecordedRequest {
  method: string;
  path: string;
  /** Headers as sent, with every Authorization value masked. */
  headers: Record<string, string>;
  /** The request as it can be sent again, secrets as variables; reports turn it into `reproduce`. */
  replay?: Replay;
}

export interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  /** The start of the body, enough to show a problem. */
  body: string;
}

export interface CheckResult {
  id: string;
  status: Outcome;
  message: string;
  /** The spec section that makes the rule. */
  spec?: string;
  request?: RecordedRequest;
  response?: RecordedResponse;
  /** For a failed check: commands that send its requests again (curl, or fetch with --reproduce-as fetch). */
  reproduce?: string;
  /**
   * Skipped because a limit of the run (memory, body or string size) kept it from being judged whole: a
   * gate that has one has not checked everything, and does not pass.
   */
  notJudged?: true;
}

export interface ScenarioResult {
  id: string;
  title: string;
  status: Outcome;
  reason?: string;
  checks: CheckResult[];
}

export interface Report {
  /** Counts of checks; a skipped scenario counts as one skipped check. */
  summary: { passed: number; failed: number; skipped: number };
  target: string;
  /** When the run started, ISO 8601. */
  startedAt: string;
  /** Said first by every report when the target looks down rather than wrong. */
  health?: string;
  /** A run that did not reach its end: said before anything else by every report. */
  ended?: RunEnd;
  warnings: string[];
  /**
   * What the traffic showed that the spec leaves open, so it is not judged (a cancelled order gone from a
   * later list): said after the warnings, neither a warning nor a failure.
   */
  notes?: string[];
  requests: number;
  /** 429 answers waited out and retried. */
  retries: number;
  durationMs: number;
  scenarios: ScenarioResult[];
  /** Reports of observed traffic (the validating proxy): which documented statuses were seen. */
  coverage?: CoverageRow[];
  /** Reports of observed traffic: what passed through and what of it was judged. */
  traffic?: TrafficSummary;
}

/**
 * Why a run stopped short: the one error that kept it from judging (exit 2), a stop signal, after which
 * the report holds what was judged before it (exit 130, 143), or the command a proxy wrapped failing
 * (its exit code): the job step does not pass, whatever the traffic showed. A report written while the
 * proxy still runs (a checkpoint) is `running`: never a pass, should the process die before the last one.
 */
export interface RunEnd {
  kind: "error" | "interrupted" | "command failed" | "running";
  message: string;
  /** "nothing was judged", or what was judged before the stop. */
  judged: string;
  /** The stop signal of an interrupted run, which its exit code says. */
  signal?: NodeJS.Signals;
  /** The exit code of the command that failed, which the run exits with. */
  exitCode?: number;
}

export interface CoverageRow {
  operation: string;
  method: string;
  path: string;
  status: number;
  /** False for a status the traffic showed that openapi.yaml does not document. */
  documented: boolean;
  seen: number;
}

export interface TrafficSummary {
  exchanges: number;
  /** Exchanges with an operation of the contract, judged by its checks. */
  judged: number;
  /**
   * Exchanges a limit of the proxy's (memory, body or string size, the deadline) let be judged only in part,
   * or not at all (those are counted in notJudged too), and those that ended without a whole answer
   * (notWhole): a gate that had one does not pass.
   */
  judgedInPart: number;
  /** The first exchange a limit or an answer it could not read let be judged only in part, and why. */
  firstJudgedInPart?: string;
  /** Forwarded but not judged: paths outside /v1, methods and paths the contract does not have, preflights. */
  notJudged: number;
  /** Requests the upstream never answered whole: the client got a 502 from the proxy, or an answer cut short. */
  upstreamFailures: number;
  /** The first of them, and why: what a gate that does not pass for them names. */
  firstUpstreamFailure?: string;
  /** Answers replaced by a 502 naming the violation (--errors). */
  replaced: number;
  /**
   * Exchanges still in flight when the proxy stopped, ended there: what came of a list was judged in part,
   * anything else not at all (counted in notJudged too).
   */
  cutOff: number;
  /**
   * Exchanges that ended without a whole answer: cut at the stop, by the deadline, by the client leaving, or
   * by the upstream after its answer began. What came of a list was judged in part; counted in judgedInPart
   * too.
   */
  notWhole: number;
  /** With --errors, violating answers the app got unchanged, because they went on before they were judged. */
  unreplaced: number;
  /**
   * Faults of the proxy's own: a part that failed on an exchange (which was ended there, not judged), or a
   * HAR or report it could not write. Each is in the warnings; the command exits 2 for them.
   */
  faults: number;
}

/** The traffic of a proxy that has seen no exchange yet. */
export function noTraffic(): TrafficSummary {
  return {
    exchanges: 0,
    judged: 0,
    judgedInPart: 0,
    notJudged: 0,
    upstreamFailures: 0,
    replaced: 0,
    cutOff: 0,
    notWhole: 0,
    unreplaced: 0,
    faults: 0,
  };
}

export function summarize(scenarios: readonly ScenarioResult[]): Report["summary"] {
  const summary = { passed: 0, failed: 0, skipped: 0 };
  for (const scenario of scenarios) {
    if (scenario.status === "skipped") summary.skipped++;
    for (const check of scenario.checks) summary[check.status]++;
  }
  return summary;
}

/** The report of a run that could not judge its target (exit 2): the one error, and nothing judged. */
export function errorReportOf(
  frame: Pick<Report, "target" | "startedAt" | "requests" | "durationMs">,
  message: string,
): Report {
  return {
    ...frame,
    summary: { passed: 0, failed: 0, skipped: 0 },
    warnings: [],
    retries: 0,
    ended: { kind: "error", message, judged: "nothing was judged" },
    scenarios: [],
  };
}
