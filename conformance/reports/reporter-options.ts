import { UsageError } from "../../common/command-line.ts";

export const REPORTERS = ["pretty", "json", "junit", "html", "markdown"] as const;
export type ReporterName = (typeof REPORTERS)[number];

/** A report to write: to FILE, or to standard output when there is none. */
export interface ReporterTarget {
  name: ReporterName;
  file?: string;
}

export function parseReporters(specs: readonly string[], output: string | undefined): ReporterTarget[] {
  const reporters = specs.map((spec): ReporterTarget => {
    const colon = spec.indexOf(":");
    const name = colon === -1 ? spec : spec.slice(0, colon);
    const file = colon === -1 ? undefined : spec.slice(colon + 1);
    if (!REPORTERS.includes(name as ReporterName)) {
      throw new UsageError(
        `--reporter must be one of ${REPORTERS.join(", ")}, with :FILE if wanted (got "${spec}")`,
      );
    }
    if (file === "") throw new UsageError(`--reporter ${name}: needs a file name after the colon`);
    return { name: name as ReporterName, ...(file ? { file } : {}) };
  });
  const toStdout = reporters.filter((reporter) => reporter.file === undefined);
  if (output !== undefined) {
    if (reporters.length !== 1 || toStdout.length !== 1) {
      throw new UsageError("--output goes with one --reporter NAME; for several, use --reporter NAME:FILE");
    }
    return [{ name: reporters[0]?.name as ReporterName, file: output }];
  }
  if (toStdout.length > 1) {
    throw new UsageError(
      "only one report can go to standard output; give the others a file (--reporter NAME:FILE)",
    );
  }
  return reporters;
}
