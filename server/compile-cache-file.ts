import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

// The compile cache's file, as the built command reads and writes it. V8 runs cached data as its own code
// and checks only the source's length against it, so a cache decides what the mock runs: it is used only
// when it is the user's own (a regular file of theirs, in a folder of theirs, neither writable by others),
// made for exactly this bundle under this Node and flags, and whole. What cannot be trusted is said once
// and never read; what is merely stale or damaged is replaced without a word.

/** Starts every cache file; a new layout gets a new mark, so that caches of an older one are replaced. */
const MARK = Buffer.from("petstore-mock compile cache 2\n");
const DIGEST_BYTES = 20;
const HEADER_BYTES = MARK.length + 2 * DIGEST_BYTES;
/** Far above any cache of the bundle: a larger file is not one, and is not read into memory. */
export const MAX_CACHE_BYTES = 64 * 1024 * 1024;
// O_NOFOLLOW and O_NONBLOCK do not exist on Windows, where neither a symlink nor a FIFO can be planted so.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const READ_FLAGS = constants.O_RDONLY | NO_FOLLOW | (constants.O_NONBLOCK ?? 0);
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW;

function digest(...parts: Buffer[]): Buffer {
  const hash = createHash("sha1");
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/** What a cache must be made for: these bundle bytes under these Node flags (Node and V8 are in its name). */
export function cacheKey(execArgv: readonly string[], bundle: Buffer): Buffer {
  return digest(Buffer.from(`${execArgv.join(" ")}\0`), bundle);
}

/** The file's bytes: the mark, the key, a digest of the data, the data. */
export function encodeCache(key: Buffer, data: Buffer): Buffer {
  return Buffer.concat([MARK, key, digest(data), data]);
}

/**
 * The data in `stored` when it was made for `key` and has not changed since: V8 trusts cached data as it
 * trusts its own heap, so a flipped byte would crash the process rather than be refused.
 */
export function decodeCache(stored: Buffer, key: Buffer): Buffer | undefined {
  if (stored.length < HEADER_BYTES || !stored.subarray(0, MARK.length).equals(MARK)) return undefined;
  const keyEnd = MARK.length + DIGEST_BYTES;
  const data = stored.subarray(HEADER_BYTES);
  const whole =
    stored.subarray(MARK.length, keyEnd).equals(key) &&
    stored.subarray(keyEnd, HEADER_BYTES).equals(digest(data));
  return whole ? data : undefined;
}

function kind(stats: Stats): string {
  if (stats.isSymbolicLink()) return "a symbolic link";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSocket()) return "a socket";
  if (stats.isDirectory()) return "a directory";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "a regular file";
}

/** Why a file or folder of these stats is not the user's own; undefined when it is. */
function notOwn(path: string, stats: Stats, expected: "a directory" | "a regular file"): string | undefined {
  const found = kind(stats);
  if (found !== expected) return `${path} is ${found}, not ${expected}`;
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid)
    return `${path} belongs to user ${stats.uid}, not to this user (${uid})`;
  // Mode bits mean nothing on Windows, where getuid does not exist either.
  if (uid !== undefined && (stats.mode & 0o022) !== 0)
    return `${path} is writable by others than its owner (chmod go-w ${path})`;
  return undefined;
}

/** Why the cache's folder is not to be used; undefined when it is the user's own or does not exist yet. */
export function untrustedFolder(folder: string): string | undefined {
  let stats: Stats | undefined;
  try {
    stats = lstatSync(folder, { throwIfNoEntry: false });
  } catch {
    // Under a file, or unreadable: nothing is read from it, and a write fails without harm.
    return undefined;
  }
  return stats && notOwn(folder, stats, "a directory");
}

export type CacheRead =
  | { data: Buffer; untrusted?: undefined }
  | { data?: undefined; untrusted?: string | undefined };

/** The stored bytes of `file` when it is the user's own; else, when it exists, why it is not used. */
export function readOwnFile(file: string): CacheRead {
  let fd: number;
  try {
    fd = openSync(file, READ_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ELOOP" || code === "EMLINK"
      ? { untrusted: `${file} is a symbolic link, not a regular file` }
      : {};
  }
  try {
    const stats = fstatSync(fd);
    const untrusted =
      notOwn(file, stats, "a regular file") ??
      (stats.size > MAX_CACHE_BYTES
        ? `${file} is ${stats.size} bytes, larger than any compile cache`
        : undefined);
    if (untrusted) return { untrusted };
    const data = Buffer.allocUnsafe(stats.size);
    let filled = 0;
    for (let read = 1; read > 0 && filled < data.length; filled += read) {
      read = readSync(fd, data, filled, data.length - filled, filled);
    }
    return { data: data.subarray(0, filled) };
  } catch {
    return {};
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `bytes` to `file` through a temporary file of a random name that only this call can have created
 * (never through a link planted in its place), renamed into place whole so that processes starting side
 * by side read one or none. False when it could not be written.
 */
export function writeOwnFile(file: string, bytes: Buffer): boolean {
  const folder = dirname(file);
  const temporary = join(folder, `.${basename(file)}.${randomBytes(8).toString("hex")}.tmp`);
  let created = false;
  try {
    mkdirSync(folder, { recursive: true, mode: 0o755 });
    if (untrustedFolder(folder) !== undefined) return false;
    const fd = openSync(temporary, CREATE_FLAGS, 0o600);
    created = true;
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
    return true;
  } catch {
    if (created) removeQuietly(temporary);
    return false;
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Harmless where it stays: the user's own, 0600, under a name no reader looks for.
  }
}
