import { writeFileSync } from "node:fs";
import { readCommandLine } from "../common/command-line.ts";
import { HookError } from "./hooks.ts";
import { type CliOptions, parseCliOptions, type ReporterName, USAGE } from "./options.ts";
import type { Report } from "./report.ts";
import { renderHtml } from "./reporters/html.ts";
import { renderJson } from "./reporters/json.ts";
import { renderJunit } from "./reporters/junit.ts";
import { renderMarkdown } from "./reporters/markdown.ts";
import { renderPretty } from "./reporters/pretty.ts";
import { ConformanceUsageError, runConformance, TargetUnreachableError } from "./runner.ts";
import { SCENARIOS } from "./scenarios.ts";

/** The command line: options in, reports out, and an exit code CI can gate on. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const options = readCommandLine(() => parseCliOptions(argv, env), USAGE);
  if (typeof options === "number") return options;
  if (options.list) {
    process.stdout.write(listScenarios());
    return 0;
  }

  let report: Report;
  try {
    report = await runConformance(options.run);
  } catch (error) {
    if (
      error instanceof ConformanceUsageError ||
      error instanceof TargetUnreachableError ||
      error instanceof HookError
    ) {
      process.stderr.write(`error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  return (
    writeReports(report, options, process.stdout.isTTY === true && !env.NO_COLOR) ??
    (report.summary.failed > 0 ? 1 : 0)
  );
}

/** Each report to its file, one to standard output (pretty when all have files); 2 when a file cannot be written. */
function writeReports(report: Report, options: CliOptions, color: boolean): number | undefined {
  for (const reporter of options.reporters) {
    if (reporter.file === undefined) continue;
    try {
      writeFileSync(reporter.file, render(report, reporter.name, false));
    } catch (error) {
      process.stderr.write(
        `error: cannot write ${reporter.file}: ${(error as NodeJS.ErrnoException).code ?? error}\n`,
      );
      return 2;
    }
  }
  const toStdout = options.reporters.find((reporter) => reporter.file === undefined)?.name ?? "pretty";
  process.stdout.write(render(report, toStdout, color));
  return undefined;
}

function render(report: Report, reporter: ReporterName, color: boolean): string {
  switch (reporter) {
    case "json":
      return renderJson(report);
    case "junit":
      return renderJunit(report);
    case "html":
      return renderHtml(report);
    case "markdown":
      return renderMarkdown(report);
    case "pretty":
      return renderPretty(report, { color });
  }
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

main(process.argv.slice(2), process.env).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    process.exitCode = 2;
  },
);
