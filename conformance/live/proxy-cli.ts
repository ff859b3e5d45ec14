import { firstStopSignal } from "../../common/stop-signals.ts";
import { ConformanceUsageError, TargetUnreachableError } from "../runner.ts";
import { writeReports } from "../write-reports.ts";
import { jsonLine, liveLine } from "./live-line.ts";
import type { ProxyCliOptions } from "./proxy-options.ts";
import { runProxy } from "./run-proxy.ts";

/**
 * `petstore-conformance proxy`: runs until SIGINT, SIGTERM or SIGHUP, writing a line per exchange, then the
 * reports over the whole traffic; the exit code gates CI with --fail-on-violation, which also fails a run
 * that judged no exchange at all.
 */
export async function proxyMain(options: ProxyCliOptions, env: NodeJS.ProcessEnv): Promise<number> {
  const tty = process.stdout.isTTY === true;
  const color = tty && !env.NO_COLOR;
  // Lines are written once per turn of the event loop: under load, one write for many exchanges.
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    process.stdout.write(pending.join(""));
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
    });
  } catch (error) {
    if (error instanceof ConformanceUsageError || error instanceof TargetUnreachableError) {
      process.stderr.write(`error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  // Taken before the ready line, so that a signal sent as soon as it appears stops the proxy cleanly.
  const stopped = firstStopSignal("petstore-conformance proxy");
  process.stderr.write(
    `petstore-conformance proxy listening on ${proxy.url}, forwarding to ${proxy.upstream}\n`,
  );
  const signal = await stopped;
  process.stderr.write(`${signal}: stopping; the reports cover every exchange\n`);
  const report = await proxy.close();
  flush();
  const written = await writeReports(report, options.reporters, color);
  if (written !== undefined) return written;
  if (!options.failOnViolation) return 0;
  if ((report.traffic?.judged ?? 0) === 0) {
    // A gate that saw nothing has checked nothing: the tests may never have reached the proxy.
    process.stderr.write("error: --fail-on-violation: no exchange was judged, so nothing was checked\n");
    return 1;
  }
  return report.summary.failed > 0 ? 1 : 0;
}
