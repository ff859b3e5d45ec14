import { printable } from "../../common/printable.ts";
import { StopSignals } from "../../common/stop-signals.ts";
import { serveUntilDone } from "../../common/wrapped-command.ts";
import { ConformanceUsageError, TargetUnreachableError } from "../target.ts";
import { writeReports } from "../write-reports.ts";
import { jsonLine, liveLine } from "./live-line.ts";
import type { ProxyCliOptions } from "./proxy-options.ts";
import { runProxy } from "./run-proxy.ts";

/**
 * `petstore-conformance proxy`: runs until SIGINT, SIGTERM or SIGHUP, or until the COMMAND it wraps ends,
 * writing a line per exchange, then the reports over the whole traffic. The exit code gates CI: COMMAND's
 * when it failed, else 1 with --fail-on-violation when a check failed or no exchange was judged at all.
 */
export async function proxyMain(options: ProxyCliOptions, env: NodeJS.ProcessEnv): Promise<number> {
  // Wrapping COMMAND, whose standard output is its own, the proxy's lines go to stderr.
  const lineStream = options.command ? process.stderr : process.stdout;
  const tty = lineStream.isTTY === true;
  const color = tty && !env.NO_COLOR;
  const reportColor = process.stdout.isTTY === true && !env.NO_COLOR;
  // Lines are written once per turn of the event loop: under load, one write for many exchanges.
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    lineStream.write(pending.join(""));
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
      process.stderr.write(`error: ${printable(error.message)}\n`);
      return 2;
    }
    throw error;
  }
  const signals = new StopSignals("petstore-conformance proxy");
  process.stderr.write(
    `petstore-conformance proxy listening on ${proxy.url}, forwarding to ${proxy.upstream}\n`,
  );
  for (const warning of proxy.startWarnings) process.stderr.write(`warning: ${printable(warning)}\n`);
  const { code: commandCode, ended } = await serveUntilDone(options.command, signals, {
    env,
    variable: "PETSTORE_PROXY_URL",
    url: proxy.url,
  });
  process.stderr.write(`${ended}: stopping; the reports cover every exchange\n`);
  const report = await proxy.close();
  flush();
  const written = await writeReports(report, options.reporters, reportColor);
  if (commandCode !== 0) return commandCode;
  if (written !== undefined) return written;
  if (!options.failOnViolation) return 0;
  if ((report.traffic?.judged ?? 0) === 0) {
    // A gate that saw nothing has checked nothing: the tests may never have reached the proxy.
    process.stderr.write("error: --fail-on-violation: no exchange was judged, so nothing was checked\n");
    return 1;
  }
  return report.summary.failed > 0 ? 1 : 0;
}
