import { constants } from "node:os";
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
  /**
   * Why the run is not a pass, one line each, beyond its failures: empty for a pass and for a failure,
   * whose failed checks (or finding) say why; the reports print these beside them.
   */
  reasons: string[];
}

/**
 * Lists of an explore run that said nothing of which orders exist, for one reason: how many, and the
 * first of them.
 */
export interface ListsNotJudged {
  /** Why, in a few words: "answered 503", "some of their orders have no int64 id", "past a reader's bound". */
  reason: string;
  count: number;
  /** A limit of the run's own kept them from being judged (raise it): the run is not checked whole. */
  limit: boolean;
  /** The first of them: its answer and what of it could not be read. */
  example: string;
}

/** What the verdict of an explore() result is read from (an ExploreResult has all of it). */
export interface ExploredRun {
  coverage: {
    orders: number;
    lists: number;
    listsReadWhole: number;
    cancels: number;
    cancelsDecided: number;
  };
  /** Present when a history the model cannot explain was found. */
  finding?: object;
  /** The stop that cut the run short (a signal's name), when one did. */
  interruptedBy?: string;
  listsNotJudged: readonly ListsNotJudged[];
  /** What the run could not look for, each in one line: not a pass. */
  notChecked?: readonly string[];
}

/** A report of the suite or the proxy, or an explore() result. */
export type JudgedRun = Report | ExploredRun;

// Fewer of an explore run's lists judged than this share, for answers that said nothing of which orders
// exist, and a pass would rest on too little of what the run saw.
export const MIN_JUDGED_LIST_SHARE = 0.5;

/**
 * The one reading of a report's outcome: every reporter's headline and the exit code come from it, so no
 * report says passed on a run that does not exit 0.
 */
export function outcomeOf(run: JudgedRun): RunOutcome {
  if (!("scenarios" in run)) return exploredOutcome(run);
  const report = run;
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
 * The exit code a gate gives the run, as the commands do: 0 only for a pass; 2 for an error or a run not
 * checked whole; 1 for a failure (a finding), and for observed traffic of which nothing was judged, but 2
 * for an explore run that judged nothing. `outcome`: the run's, when the caller has read it already.
 */
export function gateExitCode(run: JudgedRun, outcome: RunOutcome = outcomeOf(run)): number {
  const explored = !("scenarios" in run);
  switch (outcome.verdict) {
    case "error":
    case "partial":
    case "running":
      return 2;
    case "interrupted":
      return signalExitCode(explored ? signalOf(run.interruptedBy) : (run.ended?.signal ?? "SIGINT"));
    case "command failed":
      return (!explored && run.ended?.exitCode) || 1;
    case "nothing judged":
      return explored ? 2 : 1;
    case "failed":
      return 1;
    case "passed":
      return 0;
  }
}

/** The signal a stop was named by; SIGINT for a stop of the caller's own (an abort with another reason). */
function signalOf(stop: string | undefined): NodeJS.Signals {
  return stop !== undefined && stop in constants.signals ? (stop as NodeJS.Signals) : "SIGINT";
}

/**
 * An explore run: a stop cuts it short, a finding fails it; a run whose answers judged nothing, or that a
 * limit of its own kept from reading lists, or that judged too few of its lists, is not a pass.
 */
function exploredOutcome(run: ExploredRun): RunOutcome {
  if (run.interruptedBy !== undefined)
    return {
      verdict: "interrupted",
      headline: "interrupted",
      reasons: [`the run was interrupted by ${run.interruptedBy}`],
    };
  if (run.finding !== undefined) return { verdict: "failed", headline: "a finding", reasons: [] };
  const c = run.coverage;
  if (c.orders === 0 || (c.lists > 0 && c.listsReadWhole === 0) || (c.cancels > 0 && c.cancelsDecided === 0))
    return {
      verdict: "nothing judged",
      headline: "nothing judged",
      reasons: [
        `no history was judged: ${c.orders} orders used, ${c.listsReadWhole} of ${c.lists} lists read whole, ${c.cancelsDecided} of ${c.cancels} cancels answered as the model decides by`,
      ],
    };
  const reasons = [...listReasons(run), ...(run.notChecked ?? [])];
  if (reasons.length > 0) return { verdict: "partial", headline: "not everything checked", reasons };
  return { verdict: "passed", headline: "nothing found", reasons: [] };
}

/** Lists a limit of the run's own kept from being judged; too few lists judged for what the target answered. */
function listReasons(run: ExploredRun): string[] {
  const reasons = run.listsNotJudged
    .filter((lists) => lists.limit)
    .map(
      (lists) =>
        `${count(lists.count, "list was", "lists were")} not judged, for a limit of the run's (${lists.reason}: raise it); the first: ${lists.example}`,
    );
  const { lists, listsReadWhole } = run.coverage;
  if (reasons.length === 0 && listsReadWhole < lists * MIN_JUDGED_LIST_SHARE) {
    const why = run.listsNotJudged.map((not) => `${not.count} ${not.reason}`).join(", ");
    reasons.push(
      `only ${listsReadWhole} of ${lists} lists were judged (${why}), fewer than half: a pass would rest on too little; the suite run against the target says what is wrong with the list`,
    );
  }
  return reasons;
}

function notCheckedReasons(report: Report): string[] {
  const reasons: string[] = [];
  const notJudgedChecks = report.scenarios.flatMap((scenario) =>
    scenario.checks.filter((check) => check.notJudged),
  );
  const first = notJudgedChecks[0];
  if (first !== undefined)
    reasons.push(
      `${count(notJudgedChecks.length, "check was", "checks were")} not judged whole${notJudgedChecks.length === 1 ? ":" : ", the first"} ${first.id} (${first.message})`,
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
      `${count(forLimits, "exchange was", "exchanges were")} judged only in part or not at all${traffic.firstJudgedInPart ? `, the first ${traffic.firstJudgedInPart}` : " (named in the report)"}`,
    );
  return reasons;
}

function count(n: number, one: string, many: string): string {
  return n === 1 ? `1 ${one}` : `${n} ${many}`;
}
