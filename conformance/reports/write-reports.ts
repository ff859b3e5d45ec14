import { printable } from "../../common/printable.ts";
import { writeWholeFile } from "../../common/whole-file.ts";
import type { Report } from "./report.ts";
import { reportFiles, unwritableReportFile } from "./report-files.ts";
import type { ReporterName, ReporterTarget } from "./reporter-options.ts";

// Checked before a run, where a library's own start (the proxy's HAR) reads them without the reporters.

/**
 * Each report to its file, whole (written beside it and renamed into place), one to standard output (pretty
 * when all have files); 2 when a file or standard output cannot be written, after writing all the others.
 */
export async function writeReports(
  report: Report,
  reporters: readonly ReporterTarget[],
  color: boolean,
): Promise<number | undefined> {
  const { unwritten, shown } = await writeFiles(report, reporters);
  const toStdout = reporters.find((reporter) => reporter.file === undefined)?.name ?? "pretty";
  const onStdout = await writeToStdout(await render(shown, toStdout, color));
  return unwritten > 0 || !onStdout ? 2 : undefined;
}

/**
 * The reports of a run that ended in an error, each with that error. The pretty report is left out of
 * standard output, where it would only repeat the line already on stderr.
 */
export async function writeErrorReports(
  report: Report,
  reporters: readonly ReporterTarget[],
  color: boolean,
): Promise<void> {
  const shown = reporters.filter((reporter) => reporter.file !== undefined || reporter.name !== "pretty");
  const toFilesOnly = shown.every((reporter) => reporter.file !== undefined);
  if (toFilesOnly) await writeReportFiles(report, shown);
  else await writeReports(report, shown, color);
}

/** Standard output's first error (EPIPE when nothing reads it, a full disk), said once. */
const stdoutState: { watched: boolean; error?: string; said?: boolean } = { watched: false };

/** Writes to standard output; false when it cannot take the text: its error never ends the process. */
export function writeToStdout(text: string): Promise<boolean> {
  const stdout = process.stdout;
  if (!stdoutState.watched) {
    stdoutState.watched = true;
    stdout.on("error", (error: NodeJS.ErrnoException) => {
      stdoutState.error ??= errorText(error);
    });
  }
  return new Promise((resolve) => {
    const failed = (error: Error | null | undefined) => {
      stdoutState.error ??= errorText(stdout.errored ?? error);
      if (!stdoutState.said)
        process.stderr.write(`error: cannot write the report to standard output: ${stdoutState.error}\n`);
      stdoutState.said = true;
      resolve(false);
    };
    if (stdoutState.error !== undefined || stdout.destroyed) failed(stdout.errored);
    else stdout.write(text, (error) => (error ? failed(error) : resolve(true)));
  });
}

function errorText(error: Error | null | undefined): string {
  return (error as NodeJS.ErrnoException | null | undefined)?.code ?? error?.message ?? "closed";
}

/** The reports that go to files, each whole; a file that cannot be written is said on stderr. How many failed. */
export async function writeReportFiles(
  report: Report,
  reporters: readonly ReporterTarget[],
): Promise<number> {
  return (await writeFiles(report, reporters)).unwritten;
}

/**
 * Writes each report file; when one cannot be written, those that could are written again saying so, so
 * that none says passed on a run that exits 2 for it. `shown` is the report as it was last written.
 */
async function writeFiles(
  report: Report,
  reporters: readonly ReporterTarget[],
): Promise<{ unwritten: number; shown: Report }> {
  const failures = await writeEach(report, reporters, true);
  if (failures.size === 0) return { unwritten: 0, shown: report };
  const shown = withUnwritten(report, [...failures.values()]);
  await writeEach(
    shown,
    reporters.filter((reporter) => reporter.file !== undefined && !failures.has(reporter.file)),
    false,
  );
  return { unwritten: failures.size, shown };
}

/** The files that could not be written, each with why; said on stderr when `say`. */
async function writeEach(
  report: Report,
  reporters: readonly ReporterTarget[],
  say: boolean,
): Promise<Map<string, string>> {
  const failures = new Map<string, string>();
  for (const reporter of reporters) {
    if (reporter.file === undefined) continue;
    const why = reportFileWritten(reporter.file, await render(report, reporter.name, false));
    if (why === undefined) continue;
    failures.set(reporter.file, why);
    if (say) process.stderr.write(`error: ${why}\n`);
  }
  return failures;
}

/**
 * Before a run: a report file that cannot be written is said in one line, the other reports asked for
 * saying it too (a CI job uploads them whatever the exit), and the run is refused with 2; undefined when
 * every file can be written. `writeOthers`: writes those other reports of a run ended by `message`.
 */
export async function refuseUnwritable<Target extends { file?: string | undefined }>(
  reporters: readonly Target[],
  writeOthers: (message: string, others: readonly Target[]) => Promise<void>,
): Promise<number | undefined> {
  const unwritable = unwritableReportFile(reportFiles(reporters));
  if (unwritable === undefined) return undefined;
  const message = `${printable(unwritable.message)}; nothing was run`;
  process.stderr.write(`error: ${message}\n`);
  await writeOthers(
    message,
    reporters.filter((reporter) => reporter.file !== unwritable.file),
  );
  return 2;
}

/** One report file written whole; why not, when it could not be (`cannot write FILE: ENOSPC`). */
export function reportFileWritten(file: string, text: string): string | undefined {
  try {
    writeWholeFile(file, text);
    return undefined;
  } catch (error) {
    return `cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`;
  }
}

/** The report as the run ends for a report it could not write: an error (exit 2), what was judged kept. */
function withUnwritten(report: Report, failures: readonly string[]): Report {
  if (report.ended) return { ...report, warnings: [...failures, ...report.warnings] };
  return {
    ...report,
    ended: {
      kind: "error",
      message: failures.join("; "),
      judged: "the rest of this report holds what was judged",
    },
  };
}

// Each reporter is loaded when a run asks for it: JUnit's XML builder alone outweighs the rest of the suite.
async function render(report: Report, reporter: ReporterName, color: boolean): Promise<string> {
  switch (reporter) {
    case "json":
      return (await import("./json.ts")).renderJson(report);
    case "junit":
      return (await import("./junit.ts")).renderJunit(report);
    case "html":
      return (await import("./html.ts")).renderHtml(report);
    case "markdown":
      return (await import("./markdown.ts")).renderMarkdown(report);
    case "pretty":
      return (await import("./pretty.ts")).renderPretty(report, { color });
  }
}
