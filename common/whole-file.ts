import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  createReadStream,
  fchmodSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readlinkSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { appendFile, chmod, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";

// Created new, never through a link someone left at the name, and never over a file already there: a
// temporary name that another user of the directory can guess cannot be used to redirect the write.
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * A file written under a temporary name beside its target and renamed into place once complete, so that the
 * target's name only ever holds a whole file: a reader (an artifact upload, a watcher, a crash) never sees
 * half of one. The temporary name is random and created exclusively.
 */
export class WholeFile {
  readonly temporary: string;
  readonly #fd: number;
  #position = 0;
  #open = true;

  /**
   * `mode`: the new file's permissions when nothing is at `path` yet. A file already there keeps its own
   * (someone made a file of keys 0600 on purpose: a rewrite must not make it readable by all), unless
   * `existing` is "replace": then `mode` holds whatever was there (a secret going into a file others read).
   */
  constructor(
    readonly path: string,
    mode = 0o644,
    existing: "keep" | "replace" = "keep",
  ) {
    const place = placeOf(path);
    if (place.descriptor !== undefined || place.device)
      throw new Error(
        `${path} is a device or a descriptor: this file is written whole beside its name, so give the path of a file`,
      );
    this.temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
    const kept = existing === "keep" ? fileMode(path) : undefined;
    this.#fd = openSync(this.temporary, CREATE_NEW, 0o600);
    try {
      // Set after opening, so that the umask narrows neither a kept mode nor the one asked for.
      fchmodSync(this.#fd, kept ?? mode);
    } catch (error) {
      closeSync(this.#fd);
      unlinkSync(this.temporary);
      throw error;
    }
  }

  write(data: string | Uint8Array): void {
    this.#position += this.#writeAt(data, this.#position);
  }

  /** Writes after what was written without moving past it: the next write goes over it (a closing bracket). */
  writeAhead(data: string | Uint8Array): void {
    this.#writeAt(data, this.#position);
  }

  /**
   * All of `data` at `position`, or a throw: a short write (the disk or the file size limit reached) is
   * written on until the error it leads to, so that `write` moves past whole writes only.
   */
  #writeAt(data: string | Uint8Array, position: number): number {
    return writeAll(this.#fd, data, this.temporary, position);
  }

  /** Drops whatever a failed write left past what was written, and ends the file with `closing`. */
  cutAtEnd(closing: string): void {
    ftruncateSync(this.#fd, this.#position);
    this.writeAhead(closing);
  }

  /**
   * What is written so far, with `closing` after it, put under the target's name as a whole file of its own
   * (a copy renamed into place) while writing goes on here: for a file that is whole after every write,
   * such as a HAR. Copied in chunks off the event loop, and only the bytes before the current position,
   * which no later write changes.
   */
  async publishCopy(closing: string): Promise<void> {
    const length = this.#position;
    const mode = fstatSync(this.#fd).mode & 0o7777;
    const copy = join(dirname(this.path), `.${basename(this.path)}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      const target = await open(copy, CREATE_NEW, 0o600);
      await pipeline(
        createReadStream(this.temporary, { start: 0, end: Math.max(length - 1, 0) }),
        target.createWriteStream(),
      );
      await appendFile(copy, closing);
      await chmod(copy, mode);
      await rename(copy, this.path);
    } catch (error) {
      await rm(copy, { force: true });
      throw error;
    }
  }

  /** Flushed to disk and renamed over the target; the directory is flushed so that the rename holds. */
  commit(): void {
    try {
      this.#close();
      renameSync(this.temporary, this.path);
    } catch (error) {
      unlinkSync(this.temporary);
      throw error;
    }
    try {
      const directory = openSync(dirname(this.path), "r");
      fsyncSync(directory);
      closeSync(directory);
    } catch {
      // Some file systems cannot open a directory for syncing; the rename itself is still atomic there.
    }
  }

  /** Given up: the temporary file is removed and the target left as it was. */
  abandon(): void {
    try {
      this.#close();
    } finally {
      unlinkSync(this.temporary);
    }
  }

  #close(): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      fsyncSync(this.#fd);
    } finally {
      closeSync(this.#fd);
    }
  }
}

/** All of `data` written to what `path` opens (a character device). */
function writeThrough(path: string, data: string | Uint8Array): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND);
  try {
    writeAll(fd, data, path);
  } finally {
    closeSync(fd);
  }
}

/**
 * All of `data` at `position`, or at the descriptor's offset without one: to this process's own
 * descriptor the same open file is written, so what the process writes there itself neither goes over it
 * nor under it. A pipe that is full (non-blocking) is waited on. How many bytes were written: all of them.
 */
function writeAll(fd: number, data: string | Uint8Array, name: string, position?: number): number {
  const bytes = typeof data === "string" ? Buffer.from(data) : data;
  let done = 0;
  while (done < bytes.length) {
    let written: number;
    try {
      const at = position === undefined ? null : position + done;
      written = writeSync(fd, bytes, done, bytes.length - done, at);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(PAUSE, 0, 0, 5);
      continue;
    }
    if (written === 0) throw new Error(`no byte could be written to ${name}`);
    done += written;
  }
  return done;
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** This process's descriptor a name spells: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N. */
function descriptorNamed(name: string): number | undefined {
  const path = resolve(name);
  if (path === "/dev/stdout") return 1;
  if (path === "/dev/stderr") return 2;
  const numbered = /^\/(?:dev\/fd|proc\/self\/fd)\/(\d+)$/.exec(path)?.[1];
  return numbered === undefined ? undefined : Number(numbered);
}

/** The permission bits of the regular file at `path`, if there is one. */
export function fileMode(path: string): number | undefined {
  try {
    const stat = statSync(path);
    return stat.isFile() ? stat.mode & 0o7777 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where a file named by a user goes: a descriptor of this process (`/dev/stdout`, `/dev/fd/N`, or a link
 * whose target is spelled so), written to as it is; a character device named as such (/dev/null, a
 * terminal), written through; else the name itself, replaced whole by a rename: a link there to anything
 * else is replaced, never written through. A directory, a named pipe (whose open would wait for a reader), a
 * socket or a block device is refused with a line that says so.
 */
export function placeOf(path: string): { descriptor?: number; device?: true } {
  const named = descriptorNamed(path);
  if (named !== undefined) return { descriptor: named };
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return {};
  }
  if (stat.isFile()) return {};
  if (stat.isSymbolicLink()) {
    const linked = descriptorNamed(resolve(dirname(path), readlinkSync(path)));
    return linked === undefined ? {} : { descriptor: linked };
  }
  if (stat.isCharacterDevice()) return { device: true };
  const what = stat.isDirectory() ? "a directory" : stat.isFIFO() ? "a named pipe" : "not a regular file";
  throw new Error(`${path} is ${what}: give the path of a file to write`);
}

/**
 * A whole file at `path`, written at once; through a device or a descriptor (`/dev/stdout`), written
 * through as it is.
 */
export function writeWholeFile(path: string, data: string | Uint8Array, mode?: number): void {
  const place = placeOf(path);
  if (place.descriptor !== undefined) {
    writeAll(place.descriptor, data, path);
    return;
  }
  if (place.device) {
    writeThrough(path, data);
    return;
  }
  const file = new WholeFile(path, mode);
  try {
    file.write(data);
  } catch (error) {
    file.abandon();
    throw error;
  }
  file.commit();
}
