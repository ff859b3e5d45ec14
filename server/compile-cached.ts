#!/usr/bin/env node
import { isAscii } from "node:buffer";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import {
  cacheKey,
  decodeCache,
  encodeCache,
  readOwnFile,
  untrustedFolder,
  writeOwnFile,
} from "./compile-cache-file.ts";
import { offerCompileCache } from "./compile-cache-hook.ts";

// The `petstore-mock` command's first file. It runs the bundled mock through V8's code cache, so that every
// start after the first skips compiling what serving the first request needs: that compiling is most of
// the mock's cold start over a bare node:http server, and Node 20 keeps no compile cache for a package's
// own code (Node 22's module.enableCompileCache does the same for every module). The cache is a file per
// Node version, architecture, Node flags and bundle bytes, used only when it is the user's own
// (compile-cache-file.ts); a cache that cannot be read, matched or written costs only the start-up it
// would have saved.

const BUNDLE = fileURLToPath(new URL("mock-main.cjs", import.meta.url));
// Node's own wrapper, on the bundle's first line so that stack traces keep their line numbers.
const WRAPPER_START = "(function (exports, require, module, __filename, __dirname) { ";
// Long enough for a start and its first requests, which is what the next start should find compiled.
const WRITE_AFTER_MS = 1000;

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

/** One line on stderr, before the mock's own: what was not used, and why. */
function sayIgnored(reason: string): void {
  process.stderr.write(`warn: compile cache ignored: ${reason}\n`);
}

/** The cached data in `file` when it and its folder are the user's own and it was made for `key`. */
function readCache(folder: string, file: string, key: Buffer): Buffer | undefined {
  // Nothing is read from a folder that is not the user's own, and nothing is written there either.
  const folderUntrusted = untrustedFolder(folder);
  if (folderUntrusted !== undefined) {
    sayIgnored(folderUntrusted);
    return undefined;
  }
  const stored = readOwnFile(file);
  if (stored.untrusted !== undefined) sayIgnored(stored.untrusted);
  return stored.data && decodeCache(stored.data, key);
}

/**
 * Written once, from what V8 has compiled by then, and only by a mock that serves (never by --help, a
 * version or a refused option, whose cache would hold only what they compiled): a second after it starts
 * serving (a process stopped by SIGKILL, as test runners and containers stop servers, never reaches its
 * exit) or at the exit, whichever comes first; not again after --warm-cache has written it.
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
  // One file per Node version and architecture, so that rebuilds and upgrades replace it rather than pile up.
  const file = folder && join(folder, `${process.version}-${process.arch}.v8`);
  const key = cacheKey(process.execArgv, bytes);
  const cachedData = folder && file ? readCache(folder, file, key) : undefined;
  const script = new Script(`${WRAPPER_START}${source}\n})`, { filename: BUNDLE, cachedData });
  if (file) {
    let written = false;
    const write = () => {
      written = true;
      return writeOwnFile(file, encodeCache(key, script.createCachedData()));
    };
    const stale = cachedData === undefined || script.cachedDataRejected === true;
    let armed = false;
    const serving = () => {
      if (!stale || armed) return;
      armed = true;
      writeCacheOnce(write, () => written);
    };
    offerCompileCache({ file, write, serving });
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(BUNDLE), module, BUNDLE, dirname(BUNDLE));
}

run();
