import { printable } from "../../common/printable.ts";
import type { Report } from "../reports/report.ts";
import { writeReports } from "../reports/write-reports.ts";
import { HookError } from "../target/hooks.ts";
import type { CliOptions } from "./options.ts";
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
      process.stderr.write(`error: ${printable(error.message)}\n`);
      return 2;
    }
    throw error;
  }
  return (
    (await writeReports(report, options.reporters, process.stdout.isTTY === true && !env.NO_COLOR)) ??
    (report.summary.failed > 0 ? 1 : 0)
  );
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
