#!/usr/bin/env node
import { isAscii } from "node:buffer";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { offerCompileCache } from "./compile-cache-hook.ts";

// The `petstore-mock` command's first file. It runs the bundled mock through V8's code cache, so that every
// start after the first skips compiling what serving the first request needs: that compiling is most of
// the mock's cold start over a bare node:http server, and Node 20 keeps no compile cache for a package's
// own code (Node 22's module.enableCompileCache does the same for every module). The cache is a file per
// Node version, architecture, Node flags and bundle bytes; a cache that cannot be read, matched or written
// costs only the start-up it would have saved.

const BUNDLE = fileURLToPath(new URL("mock-main.cjs", import.meta.url));
// Node's own wrapper, on the bundle's first line so that stack traces keep their line numbers.
const WRAPPER_START = "(function (exports, require, module, __filename, __dirname) { ";
// Long enough for a start and its first requests, which is what the next start should find compiled.
const WRITE_AFTER_MS = 1000;

const DIGEST_BYTES = 20;

function digest(...parts: Buffer[]): Buffer {
  const hash = createHash("sha1");
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/** Where the cache lives: Node's own variables first, else the project's node_modules/.cache, as tools do. */
function cacheFolder(): string | undefined {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  if (process.env.NODE_COMPILE_CACHE) return join(process.env.NODE_COMPILE_CACHE, "petstore-mock");
  const parts = BUNDLE.split(sep);
  const modules = parts.lastIndexOf("node_modules");
  const nodeModules =
    modules >= 0 ? parts.slice(0, modules + 1).join(sep) : join(dirname(BUNDLE), "..", "..", "node_modules");
  return join(nodeModules, ".cache", "petstore-mock");
}

/**
 * The cached data in `file`, when the file was made for exactly these bytes under this Node and flags, and
 * has not changed since. V8 trusts cached data as it trusts its own heap: a flipped byte would crash the
 * process rather than be refused, so the data's digest is checked first.
 */
function readCache(file: string, key: Buffer): Buffer | undefined {
  let stored: Buffer;
  try {
    stored = readFileSync(file);
  } catch {
    return undefined;
  }
  const data = stored.subarray(2 * DIGEST_BYTES);
  const whole =
    stored.subarray(0, DIGEST_BYTES).equals(key) &&
    stored.subarray(DIGEST_BYTES, 2 * DIGEST_BYTES).equals(digest(data));
  return whole ? data : undefined;
}

/** Writes what V8 has compiled of `script` so far; false when it could not. */
function writeCache(script: Script, file: string, key: Buffer): boolean {
  const partial = `${file}.${process.pid}`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    const data = script.createCachedData();
    writeFileSync(partial, Buffer.concat([key, digest(data), data]));
    // Renamed into place whole, so processes starting side by side read one or none.
    renameSync(partial, file);
    return true;
  } catch {
    try {
      rmSync(partial, { force: true });
    } catch {
      // Nothing was written where nothing could be.
    }
    return false;
  }
}

/**
 * Written once, from what V8 has compiled by then: a second after the start (a process stopped by SIGKILL,
 * as test runners and containers stop servers, never reaches its exit) or at the exit, whichever comes
 * first; not again after --warm-cache has written it.
 */
function writeCacheOnce(write: () => void, written: () => boolean): void {
  const once = () => {
    if (!written()) write();
  };
  process.once("exit", once);
  setTimeout(once, WRITE_AFTER_MS).unref();
}

function run(): void {
  const bytes = readFileSync(BUNDLE);
  // The build writes ASCII only, which Node turns into a one-byte string the fastest as latin1.
  let source = bytes.toString(isAscii(bytes) ? "latin1" : "utf8");
  if (source.startsWith("#!")) source = `//${source.slice(2)}`;
  const folder = cacheFolder();
  // One file per Node version and architecture, so that rebuilds and upgrades replace it rather than pile up;
  // V8 itself checks only the source's length, so the file starts with a digest of the rest of the key
  // and one of the data.
  const file = folder && join(folder, `${process.version}-${process.arch}.v8`);
  const key = digest(Buffer.from(`${process.execArgv.join(" ")}\0`), bytes);
  const cachedData = file ? readCache(file, key) : undefined;
  const script = new Script(`${WRAPPER_START}${source}\n})`, { filename: BUNDLE, cachedData });
  if (file) {
    let written = false;
    const write = () => {
      written = true;
      return writeCache(script, file, key);
    };
    offerCompileCache({ file, write });
    if (cachedData === undefined || script.cachedDataRejected) writeCacheOnce(write, () => written);
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(BUNDLE), module, BUNDLE, dirname(BUNDLE));
}

run();
