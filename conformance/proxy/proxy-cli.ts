import { printable } from "../../common/printable.ts";
import { StopSignals } from "../../common/stop-signals.ts";
import { serveUntilDone } from "../../common/wrapped-command.ts";
import { gateExitCode, outcomeOf } from "../reports/outcome.ts";
import { errorReportOf, type Report, type RunEnd } from "../reports/report.ts";
import {
  refuseUnwritable,
  writeErrorReports,
  writeReportFiles,
  writeReports,
} from "../reports/write-reports.ts";
import { ConformanceUsageError, TargetUnreachableError } from "../target/target.ts";
import { jsonLine, liveLine } from "./live-line.ts";
import { observed, type ProxyCliOptions } from "./proxy-options.ts";
import { type RunningProxy, runProxy } from "./run-proxy.ts";

/**
 * `petstore-conformance proxy`: runs until SIGINT, SIGTERM or SIGHUP, or until the COMMAND it wraps ends,
 * writing a line per exchange, the report files every --flush-every, then the reports over the whole
 * traffic. The exit code gates CI and never says more than was seen: COMMAND's when it failed; else 1 with
 * --fail-on-violation when a check failed or no exchange was judged at all; else 2 when a report or the HAR
 * could not be written or the proxy itself failed somewhere.
 */
export async function proxyMain(options: ProxyCliOptions, env: NodeJS.ProcessEnv): Promise<number> {
  // Taken from the start: a signal sent while the proxy starts is a stop like any other.
  const signals = new StopSignals("petstore-conformance proxy");
  // Wrapping COMMAND, whose standard output is its own, the proxy's lines go to stderr.
  const lineStream = options.command ? process.stderr : process.stdout;
  const tty = lineStream.isTTY === true;
  const color = tty && !env.NO_COLOR;
  const reportColor = process.stdout.isTTY === true && !env.NO_COLOR;
  // Lines are written once per turn of the event loop: under load, one write for many exchanges.
  let pending: string[] = [];
  // A stream that nothing reads any more (EPIPE): the lines are dropped, said once; the report files go on.
  let linesLost = false;
  lineStream.on("error", (error: NodeJS.ErrnoException) => {
    if (linesLost) return;
    linesLost = true;
    if (lineStream !== process.stderr)
      process.stderr.write(
        `error: the live lines cannot be written (${error.code ?? error.message}); the report files still are\n`,
      );
  });
  const flush = () => {
    if (pending.length > 0 && !linesLost) lineStream.write(pending.join(""));
    pending = [];
  };
  let proxy: Awaited<ReturnType<typeof runProxy>>;
  const startedAt = new Date().toISOString();
  const started = performance.now();
  const frame = () => ({
    target: observed(options.proxy.upstream),
    startedAt,
    requests: 0,
    durationMs: Math.round(performance.now() - started),
  });
  // Before the proxy listens or COMMAND runs: a report that cannot be written is said now, not at the end.
  const refused = await refuseUnwritable(options.reporters, (why, others) =>
    writeErrorReports(errorReportOf(frame(), why), others, reportColor),
  );
  if (refused !== undefined) return refused;
  try {
    proxy = await runProxy({
      ...options.proxy,
      onExchange(judged) {
        if (options.quiet) return;
        if (pending.length === 0) setImmediate(flush);
        pending.push(tty ? liveLine(judged, { color }) : jsonLine(judged));
      },
      onProblem(problem) {
        process.stderr.write(`error: ${printable(problem)}\n`);
      },
    });
  } catch (error) {
    if (error instanceof ConformanceUsageError || error instanceof TargetUnreachableError) {
      const message = printable(error.message);
      process.stderr.write(`error: ${message}\n`);
      // A CI job uploads the report files whatever the exit: they say why there is no traffic in them.
      await writeErrorReports(errorReportOf(frame(), message), options.reporters, reportColor);
      return 2;
    }
    throw error;
  }
  const running = proxy;
  const stopBackstop = lastLine(running);
  process.stderr.write(
    `petstore-conformance proxy listening on ${proxy.url}, forwarding to ${proxy.upstream}\n`,
  );
  for (const warning of proxy.startWarnings) process.stderr.write(`warning: ${printable(warning)}\n`);
  const checkpoints = periodicReports(running, options);
  const { code: commandCode, ended } = await serveUntilDone(options.command, signals, {
    env,
    variable: "PETSTORE_PROXY_URL",
    url: proxy.url,
  });
  // Held until the reports are written: an emptied event loop must not end the stop halfway.
  const stopping = setInterval(() => {}, 1000);
  process.stderr.write(`${ended}: stopping; the reports cover every exchange\n`);
  await checkpoints.stop();
  const report = await proxy.close();
  if (commandCode !== 0) report.ended ??= wrappedCommandEnd(ended, commandCode, signals.received);
  flush();
  const written = await writeReports(report, options.reporters, reportColor);
  clearInterval(stopping);
  stopBackstop();
  if (commandCode !== 0) return commandCode;
  return exitCodeOf(report, written, options.failOnViolation);
}

/**
 * A wrapped command that did not exit 0 ends the run in every report as it ends the job step: no report
 * says passed on a step that failed, whatever the traffic showed.
 */
function wrappedCommandEnd(ended: string, code: number, signal: NodeJS.Signals | undefined): RunEnd {
  const judged = "the traffic through the proxy until then is judged below";
  return signal
    ? { kind: "interrupted", message: `the run was interrupted by ${signal}`, judged, signal }
    : { kind: "command failed", message: ended, judged, exitCode: code };
}

/**
 * The code a stopped run exits with. Under --fail-on-violation it is the one its reports' headlines say
 * (see `gateExitCode`): 1 for a failure or nothing judged, 2 for not everything checked, each said on
 * stderr. Without it, 0 unless a report was not written or the proxy itself failed (2).
 */
function exitCodeOf(report: Report, written: number | undefined, failOnViolation: boolean): number {
  const outcome = outcomeOf(report);
  if (failOnViolation && outcome.verdict === "failed") {
    const { failed } = report.summary;
    process.stderr.write(
      `error: --fail-on-violation: ${failed === 1 ? "1 check" : `${failed} checks`} failed (see the report)\n`,
    );
    return 1;
  }
  if (written !== undefined) return written;
  if ((report.traffic?.faults ?? 0) > 0) {
    process.stderr.write("error: the proxy itself failed during the run (see the report's warnings)\n");
    return 2;
  }
  if (!failOnViolation) return 0;
  const code = gateExitCode(report, outcome);
  if (code === 0) return 0;
  const ending = outcome.verdict === "partial" ? "; nothing failed, but not everything was checked" : "";
  for (const reason of outcome.reasons)
    process.stderr.write(`error: --fail-on-violation: ${printable(reason)}${ending}\n`);
  return code;
}

/** What a report written while the proxy runs says in its headline: not a verdict yet, never a pass. */
const CHECKPOINT: RunEnd = {
  kind: "running",
  message:
    "the proxy was still running when this report was written (every --flush-every); the report at its stop replaces it",
  judged: "the traffic so far is judged below",
};

/**
 * The report files (and the HAR) written every --flush-every while the proxy runs, one checkpoint at a
 * time; `stop` ends them and waits for one still being written, so that none lands after the last.
 */
function periodicReports(proxy: RunningProxy, options: ProxyCliOptions): { stop(): Promise<unknown> } {
  let checkpoint: Promise<unknown> = Promise.resolve();
  let writing = false;
  const timer = setInterval(() => {
    if (writing) return;
    writing = true;
    checkpoint = proxy
      .checkpoint()
      .then((report) => writeReportFiles({ ...report, ended: CHECKPOINT }, options.reporters))
      .finally(() => {
        writing = false;
      });
  }, options.flushEveryMs).unref();
  return {
    stop() {
      clearInterval(timer);
      return checkpoint;
    },
  };
}

/**
 * The process's last line of defence while the proxy runs: a throw or rejection that escaped every
 * exchange's supervisor is a fault in the report, not the end of the proxy; and an event loop that empties
 * before the stop wrote its reports ends with 2, never with a silent 0. Returns the way to take it down.
 */
function lastLine(proxy: RunningProxy): () => void {
  const onFault = (error: unknown) => {
    try {
      proxy.fault("the proxy", error);
      process.stderr.write("error: the proxy failed outside any exchange (see the report's warnings)\n");
    } catch {
      // Whatever was thrown cannot even be described; the process goes on all the same.
    }
  };
  const onEmpty = () => {
    process.stderr.write("error: the proxy stopped before its reports were written\n");
    process.exitCode = 2;
  };
  process.on("uncaughtException", onFault);
  process.on("unhandledRejection", onFault);
  process.on("beforeExit", onEmpty);
  return () => {
    process.off("uncaughtException", onFault);
    process.off("unhandledRejection", onFault);
    process.off("beforeExit", onEmpty);
  };
}
