#!/usr/bin/env node
import { printedVersion, readCommandLine } from "../common/command-line.ts";
import { printable } from "../common/printable.ts";
import type { ExploreReporterTarget } from "./explore/explore-options.ts";
import { PROXY_USAGE, parseProxyOptions } from "./proxy/proxy-options.ts";
import { ReportedUsageError } from "./reports/reporter-options.ts";
import { parseCliOptions, USAGE } from "./suite/options.ts";

// The `petstore-conformance` command, and its `proxy` command. --help and usage errors are answered from the
// options alone; the runner, the proxy and the reporters are loaded once the options pass.
async function start(): Promise<number> {
  const command = process.argv[2] === "proxy" || process.argv[2] === "explore" ? 3 : 2;
  if (printedVersion(process.argv.slice(command))) return 0;
  if (process.argv[2] === "proxy") {
    const options = await readReportedCommandLine(
      () => parseProxyOptions(process.argv.slice(3), process.env),
      PROXY_USAGE,
      "petstore-conformance proxy",
      writeRefusedReports,
    );
    if (typeof options === "number") return options;
    const { proxyMain } = await import("./proxy/proxy-cli.ts");
    // Out as soon as the output is written: a stop signal relayed to the group again (npm, CI runners) that
    // landed while Node tears the process down, its signal handlers gone, would end it by SIGTERM instead.
    return exitWhenWritten(await proxyMain(options, process.env));
  }
  if (process.argv[2] === "explore") {
    const { EXPLORE_USAGE, parseExploreOptions } = await import("./explore/explore-options.ts");
    const options = await readReportedCommandLine(
      () => parseExploreOptions(process.argv.slice(3), process.env),
      EXPLORE_USAGE,
      "petstore-conformance explore",
      async (refused: ReportedUsageError<ExploreReporterTarget>) =>
        (await import("./explore/explore-cli.ts")).writeRefusedReports(refused),
    );
    if (typeof options === "number") return options;
    const { exploreMain } = await import("./explore/explore-cli.ts");
    // Out once written: a hook call given up on (hung, or failed while others were out) may hold the loop.
    return exitWhenWritten(await exploreMain(options, process.env));
  }
  const options = await readReportedCommandLine(
    () => parseCliOptions(process.argv.slice(2), process.env),
    USAGE,
    "petstore-conformance",
    writeRefusedReports,
  );
  if (typeof options === "number") return options;
  const { main } = await import("./suite/cli.ts");
  // The same for the suite, whose stop leaves requests in flight.
  return exitWhenWritten(await main(options, process.env));
}

/**
 * The options, or the exit code of a command line refused: bad usage found once the reports asked for are
 * known is also written in each of them, as a run's error, by `writeRefused`.
 */
async function readReportedCommandLine<Options extends { help: boolean }, Reporter>(
  read: () => Options,
  usage: string,
  helpCommand: string,
  writeRefused: (refused: ReportedUsageError<Reporter>) => Promise<void>,
): Promise<Options | number> {
  let refused: ReportedUsageError<Reporter> | undefined;
  const options = readCommandLine(
    () => {
      try {
        return read();
      } catch (error) {
        if (error instanceof ReportedUsageError) refused = error;
        throw error;
      }
    },
    usage,
    helpCommand,
  );
  if (typeof options === "number" && refused !== undefined && refused.reporters.length > 0)
    await writeRefused(refused);
  return options;
}

/** The suite's and the proxy's reports of a refused command line: the run's error, nothing judged. */
async function writeRefusedReports(refused: ReportedUsageError): Promise<void> {
  const { errorReportOf } = await import("./reports/report.ts");
  const { writeErrorReports } = await import("./reports/write-reports.ts");
  const frame = { target: refused.target, startedAt: new Date().toISOString(), requests: 0, durationMs: 0 };
  await writeErrorReports(
    errorReportOf(frame, `${printable(refused.message)} (bad usage)`),
    refused.reporters,
    false,
  );
}

/** Out as soon as the output is written, whatever requests or timers a stopped run leaves behind. */
async function exitWhenWritten(code: number): Promise<never> {
  await new Promise((resolve) => process.stdout.write("", resolve));
  await new Promise((resolve) => process.stderr.write("", resolve));
  process.exit(code);
}

// A run whose last pending work vanished (a socket Node dropped without an event) would let the event loop
// empty and the process exit 0 with no verdict: the exit code is 2 until the run says otherwise.
let settled = false;
process.exitCode = 2;
process.once("beforeExit", () => {
  if (!settled)
    process.stderr.write("error: the run ended without a verdict: nothing was left to wait for (exit 2)\n");
});

start().then(
  (code) => {
    settled = true;
    process.exitCode = code;
  },
  (error) => {
    settled = true;
    process.stderr.write(`error: ${printable((error as Error).message)}\n`);
    process.exitCode = 2;
  },
);
