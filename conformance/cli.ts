import { writeFileSync } from "node:fs";
import { readCommandLine } from "../common/command-line.ts";
import { parseCliOptions, type ReporterName, USAGE } from "./options.ts";
import type { Report } from "./report.ts";
import { renderJson } from "./reporters/json.ts";
import { renderJunit } from "./reporters/junit.ts";
import { renderPretty } from "./reporters/pretty.ts";
import { ConformanceUsageError, runConformance, TargetUnreachableError } from "./runner.ts";

/** The command line: options in, a report out, and an exit code CI can gate on. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const options = readCommandLine(() => parseCliOptions(argv, env), USAGE);
  if (typeof options === "number") return options;

  let report: Report;
  try {
    report = await runConformance(options.run);
  } catch (error) {
    if (error instanceof ConformanceUsageError || error instanceof TargetUnreachableError) {
      process.stderr.write(`error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }

  const color = process.stdout.isTTY === true && !env.NO_COLOR;
  const rendered = render(report, options.reporter, color);
  if (options.output) {
    try {
      writeFileSync(
        options.output,
        options.reporter === "pretty" ? render(report, "pretty", false) : rendered,
      );
    } catch (error) {
      process.stderr.write(
        `error: cannot write ${options.output}: ${(error as NodeJS.ErrnoException).code ?? error}\n`,
      );
      return 2;
    }
    process.stdout.write(render(report, "pretty", color));
  } else {
    process.stdout.write(rendered);
  }
  return report.summary.failed > 0 ? 1 : 0;
}

function render(report: Report, reporter: ReporterName, color: boolean): string {
  switch (reporter) {
    case "json":
      return renderJson(report);
    case "junit":
      return renderJunit(report);
    case "pretty":
      return renderPretty(report, { color });
  }
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
