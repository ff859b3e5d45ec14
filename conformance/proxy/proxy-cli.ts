import { printable } from "../../common/printable.ts";
import { StopSignals } from "../../common/stop-signals.ts";
import { serveUntilDone } from "../../common/wrapped-command.ts";
import type { Report } from "../reports/report.ts";
import { writeReportFiles, writeReports } from "../reports/write-reports.ts";
import { ConformanceUsageError, TargetUnreachableError } from "../target/target.ts";
import { jsonLine, liveLine } from "./live-line.ts";
import type { ProxyCliOptions } from "./proxy-options.ts";
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
  try {
    proxy = await runProxy({
      ...options.proxy,
      onExchange(judged) {
        if (pending.length === 0) setImmediate(flush);
        pending.push(tty ? liveLine(judged, { color }) : jsonLine(judged));
      },
      onProblem(problem) {
        process.stderr.write(`error: ${printable(problem)}\n`);
      },
    });
  } catch (error) {
    if (error instanceof ConformanceUsageError || error instanceof TargetUnreachableError) {
      process.stderr.write(`error: ${printable(error.message)}\n`);
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
  flush();
  const written = await writeReports(report, options.reporters, reportColor);
  clearInterval(stopping);
  stopBackstop();
  if (commandCode !== 0) return commandCode;
  return exitCodeOf(report, written, options.failOnViolation);
}

/**
 * The code a stopped run exits with: 1 for a failure under --fail-on-violation, 2 for a report not
 * written or a fault of the proxy's own, and under --fail-on-violation 2 for an exchange judged only in
 * part (a limit, or an answer that was not whole) and 1 when nothing was judged: a gate that could not
 * check everything does not pass.
 */
function exitCodeOf(report: Report, written: number | undefined, failOnViolation: boolean): number {
  if (failOnViolation && report.summary.failed > 0) return 1;
  if (written !== undefined) return written;
  if ((report.traffic?.faults ?? 0) > 0) {
    process.stderr.write("error: the proxy itself failed during the run (see the report's warnings)\n");
    return 2;
  }
  if (!failOnViolation) return 0;
  const inPart = report.traffic?.judgedInPart ?? 0;
  const notWhole = report.traffic?.notWhole ?? 0;
  if (notWhole > 0) {
    process.stderr.write(
      `error: --fail-on-violation: ${notWhole === 1 ? "1 exchange" : `${notWhole} exchanges`} ended without a whole answer (cut at the stop, by --deadline, by the client leaving, or by the upstream: named in the report), so what came was judged in part at most; nothing failed, but not everything was checked\n`,
    );
    return 2;
  }
  if (inPart > 0) {
    process.stderr.write(
      `error: --fail-on-violation: ${inPart === 1 ? "1 exchange was" : `${inPart} exchanges were`} judged only in part or not at all, for a limit (named in the report: raise it); nothing failed, but not everything was checked\n`,
    );
    return 2;
  }
  if ((report.traffic?.judged ?? 0) === 0) {
    // A gate that saw nothing has checked nothing: the tests may never have reached the proxy.
    process.stderr.write("error: --fail-on-violation: no exchange was judged, so nothing was checked\n");
    return 1;
  }
  return 0;
}

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
      .then((report) => writeReportFiles(report, options.reporters))
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
