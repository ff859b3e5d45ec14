import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { placeOf, WholeFile } from "../../common/whole-file.ts";

/** The files of the reports asked for. */
export function reportFiles(reporters: readonly { file?: string }[]): string[] {
  return reporters.flatMap((reporter) => (reporter.file === undefined ? [] : [reporter.file]));
}

/**
 * The first of `files` that cannot be written, and why, found before the run rather than after it: each
 * file's missing folders are made (as Playwright's and jest-junit's reporters make them) and a file is
 * created and removed beside its name, as the whole write will create one. A descriptor (/dev/stdout) or a
 * device is written through as it is, and left alone; a directory or a named pipe is refused, as when
 * writing. Undefined when every file can be written.
 */
export function unwritableReportFile(
  files: readonly string[],
  /** "whole": the file is only ever written whole beside its name (the HAR), so a device is refused too. */
  written: "through" | "whole" = "through",
): { file: string; message: string } | undefined {
  // Every file is checked (its folders made), so that the others can say why the run was refused.
  let first: { file: string; message: string } | undefined;
  for (const file of files) {
    const message = fileUnwritable(file, written);
    if (message !== undefined) first ??= { file, message };
  }
  return first;
}

function fileUnwritable(file: string, written: "through" | "whole"): string | undefined {
  let place: ReturnType<typeof placeOf>;
  try {
    place = placeOf(file);
  } catch (error) {
    return `cannot write ${file}: ${(error as Error).message}`;
  }
  if (place.descriptor !== undefined || place.device)
    return written === "through"
      ? undefined
      : `cannot write ${file}: it is a device or a descriptor, and this file is written whole beside its name: give the path of a file`;
  const folder = dirname(file);
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const inTheWay = code === "EEXIST" || code === "ENOTDIR" ? ": a file is in the way" : "";
    return `cannot write ${file}: its folder ${folder} cannot be made${inTheWay} (${code ?? error})`;
  }
  try {
    new WholeFile(file).abandon();
    return undefined;
  } catch (error) {
    return `cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`;
  }
}
