import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { formatBytes } from "./byte-size.ts";

/** Why a file given on the command line was not read; the message names no path (the caller does). */
export class FileRefused extends Error {
  constructor(
    message: string,
    /** The system's error code when the file could not be opened (ENOENT, EACCES…). */
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * A file's text, `kind` naming what it should be ("the state file"), read only when it is a regular file of
 * at most `maxBytes`: a device such as /dev/zero or a pipe never ends (and a pipe opened without a writer
 * would hang), so both are refused at once, as is a file larger than any of its kind, rather than read
 * into memory.
 */
export function readBoundedFile(path: string, maxBytes: number, kind: string): string {
  let fd: number;
  try {
    // Non-blocking, so that opening a FIFO with no writer returns instead of waiting for one.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    throw new FileRefused(`cannot read it (${code ?? error})`, code);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new FileRefused(`not a regular file; ${kind} must be one`);
    if (stat.size > maxBytes)
      throw new FileRefused(`${stat.size} bytes, larger than ${kind} may be (${formatBytes(maxBytes)})`);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}
