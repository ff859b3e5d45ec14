import { ConformanceUsageError, TargetUnreachableError } from "../runner.ts";
import { writeReports } from "../write-reports.ts";
import { jsonLine, liveLine } from "./live-line.ts";
import type { ProxyCliOptions } from "./proxy-options.ts";
import { runProxy } from "./run-proxy.ts";

/**
 * `petstore-conformance proxy`: runs until SIGINT or SIGTERM, writing a line per exchange, then the
 * reports over the whole traffic; the exit code gates CI with --fail-on-violation.
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
  process.stderr.write(
    `petstore-conformance proxy listening on ${proxy.url}, forwarding to ${proxy.upstream}\n`,
  );
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  process.stderr.write(`${signal}: stopping; the reports cover every exchange\n`);
  const report = await proxy.close();
  flush();
  const written = await writeReports(report, options.reporters, color);
  if (written !== undefined) return written;
  return options.failOnViolation && report.summary.failed > 0 ? 1 : 0;
}
