import { randomInt } from "node:crypto";
import { printable } from "../../common/printable.ts";
import { StopSignals, signalExitCode } from "../../common/stop-signals.ts";
import { gateExitCode } from "../reports/outcome.ts";
import type { ReportedUsageError } from "../reports/reporter-options.ts";
import { refuseUnwritable, reportFileWritten, writeToStdout } from "../reports/write-reports.ts";
import { hideUrlCredentials } from "../target/credentials.ts";
import { HookError } from "../target/hooks.ts";
import { ConformanceUsageError, TargetUnreachableError } from "../target/target.ts";
import { type ExploreResult, explore } from "./explore.ts";
import type { ExploreCliOptions, ExploreReporterName, ExploreReporterTarget } from "./explore-options.ts";
import { type ExploreError, renderExploreError } from "./report-error.ts";

/**
 * `petstore-conformance explore`: 0 nothing found, 1 a finding, 2 the run itself is wrong; 128 + the
 * signal's number when a stop signal cut it short, after the reports of what it covered.
 */
export async function exploreMain(options: ExploreCliOptions, env: NodeJS.ProcessEnv): Promise<number> {
  const seed = options.run.seed ?? randomInt(2 ** 31);
  // Taken before the first request: a stop at any moment still leaves the reports asked for.
  const signals = new StopSignals("petstore-conformance explore");
  const stop = new AbortController();
  void signals.first.then((signal) => {
    signals.bound(signalExitCode(signal));
    process.stderr.write(`petstore-conformance explore: stopped by ${signal}; writing the reports\n`);
    stop.abort(signal);
  });
  const refused = await refuseUnwritable(options.reporters, (message, others) =>
    writeErrorReports(
      {
        target: hideUrlCredentials(options.run.baseUrl),
        startedAt: new Date().toISOString(),
        durationMs: 0,
        seed,
        message,
      },
      { ...options, reporters: [...others] },
    ),
  );
  if (refused !== undefined) return refused;
  // Said first, so that a run stopped half-way can still be repeated; once: the pretty report says it.
  if (stdoutReporter(options) !== "pretty") process.stderr.write(`explore: seed ${seed}\n`);
  let result: ExploreResult;
  const startedAt = new Date().toISOString();
  const started = performance.now();
  try {
    result = await explore({ ...options.run, seed, stop: stop.signal });
  } catch (error) {
    if (
      error instanceof ConformanceUsageError ||
      error instanceof TargetUnreachableError ||
      error instanceof HookError
    ) {
      const message = printable(error.message);
      process.stderr.write(`error: ${message}\n`);
      const durationMs = Math.round(performance.now() - started);
      // As given, but for credentials a URL may hold (the error may be that it holds them).
      const target = hideUrlCredentials(options.run.baseUrl);
      const interruptedBy = signals.received;
      const ended = {
        target,
        startedAt,
        durationMs,
        seed,
        message,
        ...(interruptedBy ? { interruptedBy } : {}),
      };
      await writeErrorReports(ended, options);
      return signals.received ? signalExitCode(signals.received) : 2;
    }
    throw error;
  }
  const unwritten = await writeExploreReports(result, options, env);
  if (signals.received) return signalExitCode(signals.received);
  if (unwritten > 0) return 2;
  return gateExitCode(result);
}

/**
 * A command line refused: the reports it asks for say so, as a run's error (the pretty one is the stderr
 * line already written), so that a CI step's next steps find their files.
 */
export async function writeRefusedReports(refused: ReportedUsageError<ExploreReporterTarget>): Promise<void> {
  const error = {
    target: hideUrlCredentials(refused.target),
    startedAt: new Date().toISOString(),
    durationMs: 0,
    message: `${printable(refused.message)} (bad usage)`,
  };
  await writeErrorReports(error, refused);
}

/** A run that could not explore: every report asked for says the error (the pretty one is the stderr line). */
async function writeErrorReports(
  error: ExploreError,
  options: { reporters: readonly ExploreReporterTarget[] },
): Promise<void> {
  for (const reporter of options.reporters) {
    const text = renderExploreError(error, reporter.name);
    if (text === undefined) continue;
    if (reporter.file === undefined) {
      await writeToStdout(text);
      continue;
    }
    const why = reportFileWritten(reporter.file, text);
    if (why !== undefined) process.stderr.write(`error: ${why}\n`);
  }
}

/** Every report asked for: those with a file to it, then one on standard output. How many were not written. */
async function writeExploreReports(
  result: ExploreResult,
  options: ExploreCliOptions,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  let unwritten = 0;
  for (const reporter of options.reporters) {
    if (reporter.file === undefined) continue;
    const why = reportFileWritten(reporter.file, await render(result, reporter.name, false, options));
    if (why === undefined) continue;
    unwritten++;
    process.stderr.write(`error: ${why}\n`);
  }
  const toStdout = stdoutReporter(options);
  const color = process.stdout.isTTY === true && !env.NO_COLOR;
  const shown = await writeToStdout(await render(result, toStdout, color, options));
  return shown ? unwritten : unwritten + 1;
}

/** The report on standard output: the one without a file, or the pretty one when all have files. */
function stdoutReporter(options: { reporters: readonly ExploreReporterTarget[] }): ExploreReporterName {
  return options.reporters.find((reporter) => reporter.file === undefined)?.name ?? "pretty";
}

async function render(
  result: ExploreResult,
  reporter: ExploreReporterName,
  color: boolean,
  options: ExploreCliOptions,
): Promise<string> {
  switch (reporter) {
    case "json":
      return (await import("./report-json.ts")).renderExploreJson(result);
    case "junit":
      return (await import("./report-junit.ts")).renderExploreJunit(result);
    case "html":
      return (await import("./report-html.ts")).renderExploreHtml(result);
    case "markdown":
      return (await import("./report-markdown.ts")).renderExploreMarkdown(result);
    case "script":
      // The script sends the run's session and headers again: names and shown values from the run's options.
      return (await import("./report-script.ts")).renderExploreScript(result, options.run);
    case "pretty":
      return (await import("./report-pretty.ts")).renderExplorePretty(result, { color });
  }
}
