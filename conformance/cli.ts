import { writeFileSync } from "node:fs";
import { HookError } from "./hooks.ts";
import type { CliOptions, ReporterName } from "./options.ts";
import type { Report } from "./report.ts";
import { ConformanceUsageError, runConformance, TargetUnreachableError } from "./runner.ts";
import { SCENARIOS } from "./scenarios.ts";

/** The command line once its options are read: reports out, and an exit code CI can gate on. */
export async function main(options: CliOptions, env: NodeJS.ProcessEnv): Promise<number> {
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
    (await writeReports(report, options, process.stdout.isTTY === true && !env.NO_COLOR)) ??
    (report.summary.failed > 0 ? 1 : 0)
  );
}

/** Each report to its file, one to standard output (pretty when all have files); 2 when a file cannot be written. */
async function writeReports(
  report: Report,
  options: CliOptions,
  color: boolean,
): Promise<number | undefined> {
  for (const reporter of options.reporters) {
    if (reporter.file === undefined) continue;
    try {
      writeFileSync(reporter.file, await render(report, reporter.name, false));
    } catch (error) {
      process.stderr.write(
        `error: cannot write ${reporter.file}: ${(error as NodeJS.ErrnoException).code ?? error}\n`,
      );
      return 2;
    }
  }
  const toStdout = options.reporters.find((reporter) => reporter.file === undefined)?.name ?? "pretty";
  process.stdout.write(await render(report, toStdout, color));
  return undefined;
}

// Each reporter is loaded when a run asks for it: JUnit's XML builder alone outweighs the rest of the suite.
async function render(report: Report, reporter: ReporterName, color: boolean): Promise<string> {
  switch (reporter) {
    case "json":
      return (await import("./reporters/json.ts")).renderJson(report);
    case "junit":
      return (await import("./reporters/junit.ts")).renderJunit(report);
    case "html":
      return (await import("./reporters/html.ts")).renderHtml(report);
    case "markdown":
      return (await import("./reporters/markdown.ts")).renderMarkdown(report);
    case "pretty":
      return (await import("./reporters/pretty.ts")).renderPretty(report, { color });
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
