import { resolve } from "node:path";
import { parseArgs } from "node:util";
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
  refuseSharedFiles(
    reporters.flatMap((reporter) => (reporter.file ? [[`--reporter ${reporter.name}`, reporter.file]] : [])),
  );
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

/**
 * Files the run writes, each named by its flag: two that name one file would leave only the last one
 * written, the other lost without a word. Compared as resolved paths.
 */
export function refuseSharedFiles(files: ReadonlyArray<readonly [string, string]>): void {
  const seen = new Map<string, string>();
  for (const [flag, file] of files) {
    const path = resolve(file);
    const other = seen.get(path);
    if (other !== undefined)
      throw new UsageError(`${other} and ${flag} name the same file ${file}: give each its own`);
    seen.set(path, flag);
  }
}

/**
 * Bad usage found once the reports asked for are known: they are written with it (exit 2). `Reporter`: the
 * command's kind of report (explore has reports of its own).
 */
export class ReportedUsageError<Reporter = ReporterTarget> extends UsageError {
  constructor(
    message: string,
    readonly reporters: Reporter[],
    readonly target: string,
  ) {
    super(message);
  }
}

/**
 * The reports a refused command line asks for, read leniently (a mistyped flag, a bad value elsewhere): a CI
 * step whose options are wrong still writes the report files its next steps read, each saying why. None when
 * `--reporter` itself is what is wrong, or --help was asked for.
 */
export function reportersAskedFor(argv: readonly string[], takesOutput = true): ReporterTarget[] {
  const asked = readLeniently(argv, ["reporter", "output"]);
  if (asked.help) return [];
  const specs = asked.values.get("reporter") ?? [];
  try {
    return parseReporters(
      specs.length > 0 ? specs : ["pretty"],
      takesOutput ? asked.values.get("output")?.at(-1) : undefined,
    );
  } catch {
    return [];
  }
}

/**
 * A refused command line read leniently: the values of the named string flags (unknown flags and
 * positionals pass unread), and whether --help was asked for.
 */
export function readLeniently(
  argv: readonly string[],
  names: readonly string[],
): { help: boolean; values: Map<string, string[]> } {
  const { values } = parseArgs({
    args: [...argv],
    strict: false,
    allowPositionals: true,
    options: {
      ...Object.fromEntries(names.map((name) => [name, { type: "string", multiple: true } as const])),
      help: { type: "boolean", short: "h" },
    },
  });
  const strings = new Map<string, string[]>();
  for (const name of names) {
    const given = [values[name] ?? []].flat().filter((value): value is string => typeof value === "string");
    if (given.length > 0) strings.set(name, given);
  }
  return { help: values.help === true, values: strings };
}
