import { printable } from "../../common/printable.ts";
import { StopSignals, signalExitCode } from "../../common/stop-signals.ts";
import { gateExitCode, outcomeOf } from "../reports/outcome.ts";
import type { Report } from "../reports/report.ts";
import type { ReporterTarget } from "../reports/reporter-options.ts";
import { refuseUnwritable, writeErrorReports, writeReports } from "../reports/write-reports.ts";
import { hideUrlCredentials } from "../target/credentials.ts";
import { HookError } from "../target/hooks.ts";
import type { CliOptions } from "./options.ts";
import { errorReport, interruptedReport, type RunProgress } from "./run-end.ts";
import { ConformanceUsageError, runConformance, TargetUnreachableError } from "./runner.ts";
import { SCENARIOS } from "./scenarios.ts";

/** The command line once its options are read: reports out, and an exit code CI can gate on. */
export async function main(options: CliOptions, env: NodeJS.ProcessEnv): Promise<number> {
  if (options.list) {
    process.stdout.write(listScenarios());
    return 0;
  }
  const color = process.stdout.isTTY === true && !env.NO_COLOR;
  const progress = startProgress(options.run.baseUrl);
  // Before the first request: a report that cannot be written is said now, not after every scenario ran.
  const refused = await refuseUnwritable(options.reporters, (why, others) =>
    writeErrorReports(errorReport(progress, why), others, color),
  );
  if (refused !== undefined) return refused;
  // Taken before the first request: a stop at any moment still leaves the reports asked for.
  const signals = new StopSignals("petstore-conformance");
  const run = runConformance({
    ...options.run,
    onExchange: (exchange) => {
      progress.requests++;
      options.run.onExchange?.(exchange);
    },
    onScenario: (result) => {
      progress.played.push(result);
      options.run.onScenario?.(result);
    },
  }).then(
    (report) => ({ report }),
    (error: unknown) => ({ error }),
  );
  const ended = await Promise.race([run, signals.first.then((signal) => ({ signal }))]);
  if ("signal" in ended) {
    const code = signalExitCode(ended.signal);
    signals.bound(code);
    process.stderr.write(`petstore-conformance: stopped by ${ended.signal}; writing the reports\n`);
    const scenarios = options.run.scenarios ?? SCENARIOS;
    await writeReports(interruptedReport(progress, ended.signal, scenarios), options.reporters, color);
    return code;
  }
  if ("error" in ended) return failedRun(ended.error, progress, options.reporters, color);
  const { report } = ended;
  return (await writeReports(report, options.reporters, color)) ?? verdictCode(report);
}

/** The run's exit code, as its reports' headlines say it; a run not checked whole says why on stderr. */
function verdictCode(report: Report): number {
  const outcome = outcomeOf(report);
  if (outcome.verdict === "partial")
    process.stderr.write(
      `petstore-conformance: ${outcome.reasons.join("; ")}; nothing failed, but the run is not a pass\n`,
    );
  return gateExitCode(report, outcome);
}

/**
 * The start of a run's progress, for a report of a run stopped short; a target refused for the credentials
 * in it is named without them.
 */
export function startProgress(target: string): RunProgress {
  return {
    target: hideUrlCredentials(target),
    startedAt: new Date().toISOString(),
    started: performance.now(),
    requests: 0,
    played: [],
  };
}

/** A run that could not judge: its one line, every report asked for with that line, exit 2. */
async function failedRun(
  error: unknown,
  progress: RunProgress,
  reporters: readonly ReporterTarget[],
  color: boolean,
): Promise<number> {
  if (
    !(
      error instanceof ConformanceUsageError ||
      error instanceof TargetUnreachableError ||
      error instanceof HookError
    )
  )
    throw error;
  const message = printable(error.message);
  process.stderr.write(`error: ${message}\n`);
  await writeErrorReports(errorReport(progress, message), reporters, color);
  return 2;
}

function listScenarios(): string {
  const lines = SCENARIOS.map((scenario) => {
    const needs = scenario.needs ? `needs --${scenario.needs}-order-id` : "needs no order id";
    const changes =
      scenario.phase === 2 ? "changes state (cancels the order it is given)" : "changes nothing";
    return `${scenario.id}\n  ${scenario.title}\n  ${needs}; ${changes}`;
  });
  return `${lines.join("\n")}\n`;
}
