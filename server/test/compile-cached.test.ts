import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { tempFolder } from "../../common/temp-folder.ts";
import { startListeningProcess } from "../../test-support/spawn-mock.ts";
import { cacheKey, decodeCache, encodeCache } from "../compile-cache-file.ts";

// The built `petstore-mock` command runs its bundle through V8's code cache (server/compile-cached.ts): a
// cache is written by a first start, read by the next, and a cache that is stale, damaged or cannot be
// written never stops the mock from serving.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const COMMAND = join(ROOT, "dist/mock/petstore-mock.cjs");
const BUNDLE = join(ROOT, "dist/mock/mock-main.cjs");
const LONG_AGO = new Date("2001-01-01T00:00:00Z");

/** Starts the built command with `env`, reads the list once, and stops it with `signal`. */
async function serveOnce(env: NodeJS.ProcessEnv, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  const mock = await startListeningProcess(COMMAND, ["--port", "0", "--quiet"], env);
  try {
    const response = await fetch(`${mock.url}/store/orders`, {
      headers: { authorization: "Bearer dev-key-123" },
    });
    assert.equal(response.status, 200);
    assert.ok(Array.isArray(await response.json()));
  } finally {
    const code = await mock.stop(signal);
    if (signal === "SIGTERM") assert.equal(code, 0, mock.output());
    assert.doesNotMatch(mock.output(), /error|warn/i);
  }
}

interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built command with `args` to its exit; `spawned` runs as soon as its process exists. */
async function runToExit(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  spawned: (pid: number) => void = () => {},
  command = COMMAND,
): Promise<Exited> {
  const child = spawn(process.execPath, [command, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  spawned(child.pid as number);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

/** `petstore-mock --warm-cache` to its exit: the code and what it wrote. */
function warmCache(env: NodeJS.ProcessEnv, spawned?: (pid: number) => void): Promise<Exited> {
  return runToExit(["--warm-cache", "--quiet"], env, spawned);
}

function cacheIn(folder: string): string {
  return join(folder, "petstore-mock", `${process.version}-${process.arch}.v8`);
}

describe("the built mock's compile cache", { concurrency: true }, () => {
  it("is written by a first start and read, unchanged, by the next", async () => {
    assert.ok(existsSync(COMMAND), "dist/ is missing: run npm run build");
    const folder = tempFolder("compile-cache-");
    await serveOnce({ NODE_COMPILE_CACHE: folder });
    const cache = cacheIn(folder);
    assert.ok(statSync(cache).size > 100_000, "a cache of the compiled serving code");
    // Rewritten only when missing or refused: an old time that survives a start says it was used.
    utimesSync(cache, LONG_AGO, LONG_AGO);
    await serveOnce({ NODE_COMPILE_CACHE: folder });
    assert.equal(statSync(cache).mtime.getTime(), LONG_AGO.getTime());
  });

  it("is written a second after the start by a mock that is then killed, as test runners stop servers", async () => {
    const folder = tempFolder("compile-cache-");
    const mock = await startListeningProcess(COMMAND, ["--port", "0", "--quiet"], {
      NODE_COMPILE_CACHE: folder,
    });
    try {
      for (let waited = 0; waited < 15_000 && !existsSync(cacheIn(folder)); waited += 50) await sleep(50);
    } finally {
      await mock.stop("SIGKILL");
    }
    assert.ok(existsSync(cacheIn(folder)), "no cache written before the kill");
  });

  it("replaces a damaged cache, byte flips in V8's data included, and serves meanwhile", async () => {
    const folder = tempFolder("compile-cache-");
    await serveOnce({ NODE_COMPILE_CACHE: folder });
    const cache = cacheIn(folder);
    const damaged = Buffer.from(readFileSync(cache));
    // Past the two digests at its start, where V8 itself checks nothing and would crash on what it read.
    for (let at = 4096; at < damaged.length; at += 997) damaged[at] = (damaged[at] as number) ^ 0x5a;
    for (const bytes of [damaged, Buffer.from("not a cache"), Buffer.alloc(0)]) {
      writeFileSync(cache, bytes);
      utimesSync(cache, LONG_AGO, LONG_AGO);
      await serveOnce({ NODE_COMPILE_CACHE: folder });
      assert.notEqual(statSync(cache).mtime.getTime(), LONG_AGO.getTime(), "the damaged cache was kept");
    }
  });

  it("serves when the cache cannot be written, and writes none when Node's switch turns caching off", async () => {
    const folder = tempFolder("compile-cache-");
    const aFile = join(folder, "a-file");
    writeFileSync(aFile, "");
    await serveOnce({ NODE_COMPILE_CACHE: join(aFile, "below") });
    await serveOnce({ NODE_COMPILE_CACHE: folder, NODE_DISABLE_COMPILE_CACHE: "1" });
    assert.equal(existsSync(join(folder, "petstore-mock")), false);
  });

  it("is written by --warm-cache, which answers itself and exits, and read unchanged by the next start", async () => {
    const folder = tempFolder("compile-cache-");
    const warmed = await warmCache({ NODE_COMPILE_CACHE: folder });
    assert.equal(warmed.code, 0, warmed.stderr);
    const cache = cacheIn(folder);
    assert.equal(warmed.stdout, `compile cache written to ${cache}\n`);
    assert.ok(statSync(cache).size > 100_000, "a cache of the compiled serving code");
    utimesSync(cache, LONG_AGO, LONG_AGO);
    await serveOnce({ NODE_COMPILE_CACHE: folder });
    assert.equal(statSync(cache).mtime.getTime(), LONG_AGO.getTime(), "the warmed cache was refused");
  });

  it("--warm-cache says why it wrote nothing, and still exits 0, when caching is off or cannot write", async () => {
    const folder = tempFolder("compile-cache-");
    const off = await warmCache({ NODE_COMPILE_CACHE: folder, NODE_DISABLE_COMPILE_CACHE: "1" });
    assert.equal(off.code, 0);
    assert.match(off.stderr, /^warn: no compile cache to write: .*NODE_DISABLE_COMPILE_CACHE\n$/);
    assert.equal(existsSync(join(folder, "petstore-mock")), false);
    const aFile = join(folder, "a-file");
    writeFileSync(aFile, "");
    const unwritable = await warmCache({ NODE_COMPILE_CACHE: join(aFile, "below") });
    assert.equal(unwritable.code, 0);
    assert.match(unwritable.stderr, /^warn: the compile cache could not be written to .*a-file/);
  });

  it("is kept for a bundle of ASCII only, which Node reads fastest", () => {
    const nonAscii = /[^\0-\x7f]/.exec(readFileSync(BUNDLE, "latin1"));
    assert.equal(nonAscii, null, `a character past ASCII at ${nonAscii?.index}`);
  });
});

const IGNORED = /warn: compile cache ignored: /g;
// The mock's key check, and the same bytes made to accept any key: the other code a planted cache brings.
const KEY_CHECK = "return matched === 1 ? ACCEPTED : UNKNOWN_TOKEN;";
const ANY_KEY = "return matched === 1 ? ACCEPTED : ACCEPTED     ;";

/** Starts the built command on the cache in `folder`, reads the list with `token`, stops it (SIGTERM). */
async function listWith(folder: string, token: string): Promise<{ status: number; output: string }> {
  const mock = await startListeningProcess(COMMAND, ["--port", "0", "--quiet"], {
    NODE_COMPILE_CACHE: folder,
  });
  let status: number;
  try {
    const response = await fetch(`${mock.url}/store/orders`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await response.arrayBuffer();
    status = response.status;
  } finally {
    await mock.stop();
  }
  return { status, output: mock.output() };
}

function assertSaidOnce(output: string, reason: RegExp): void {
  assert.equal(output.match(IGNORED)?.length, 1, output);
  assert.match(output, reason);
}

/** Writes `bytes` as the cache in `folder`, its folder the user's own, the file of `mode`. */
function plant(folder: string, bytes: Buffer, mode = 0o600): string {
  mkdirSync(join(folder, "petstore-mock"), { mode: 0o700 });
  const cache = cacheIn(folder);
  writeFileSync(cache, bytes);
  chmodSync(cache, mode);
  return cache;
}

/**
 * A cache of other code, as an attacker makes one: the command run on a copy of the bundle that accepts any
 * key, its cache then given the header of a cache made for the real bundle.
 */
async function otherCodeCache(): Promise<Buffer> {
  const other = tempFolder("compile-cache-other-code-");
  const bundle = readFileSync(BUNDLE, "latin1");
  assert.ok(bundle.includes(KEY_CHECK), "the bundle's key check has changed: update KEY_CHECK");
  const otherBundle = Buffer.from(bundle.replace(KEY_CHECK, ANY_KEY), "latin1");
  mkdirSync(join(other, "dist/mock"), { recursive: true });
  writeFileSync(join(other, "dist/mock/mock-main.cjs"), otherBundle);
  copyFileSync(COMMAND, join(other, "dist/mock/petstore-mock.cjs"));
  copyFileSync(join(ROOT, "package.json"), join(other, "package.json"));
  for (const shared of ["fixtures", "server"]) symlinkSync(join(ROOT, shared), join(other, shared));
  const env = { NODE_COMPILE_CACHE: join(other, "cache") };
  const warmed = await runToExit(
    ["--warm-cache", "--quiet"],
    env,
    undefined,
    join(other, "dist/mock/petstore-mock.cjs"),
  );
  assert.equal(warmed.code, 0, warmed.stderr);
  const data = decodeCache(readFileSync(cacheIn(join(other, "cache"))), cacheKey([], otherBundle));
  assert.ok(data, "no cache of the other code");
  return encodeCache(cacheKey([], readFileSync(BUNDLE)), data);
}

describe("a planted compile cache", { concurrency: true }, () => {
  it("is never run when others could have planted it: a cache of other code keyed for this bundle", async () => {
    const planted = await otherCodeCache();
    // The control: as the user's own file it would run (it is trusted as the bundle is: whoever can write
    // the user's files can change the bundle itself), so the refusals below are the trust checks' own.
    const own = tempFolder("compile-cache-");
    plant(own, planted);
    assert.equal((await listWith(own, "wrong")).status, 200, "the planted cache is not one of other code");

    const groupWritable = tempFolder("compile-cache-");
    plant(groupWritable, planted, 0o664);
    const refused = await listWith(groupWritable, "wrong");
    assert.equal(refused.status, 401);
    assertSaidOnce(refused.output, /v8 is writable by others than its owner \(chmod go-w /);
    if (process.getuid?.() === 0) {
      const strangers = tempFolder("compile-cache-");
      chownSync(plant(strangers, planted), 65534, 65534);
      const notOwn = await listWith(strangers, "wrong");
      assert.equal(notOwn.status, 401);
      assertSaidOnce(notOwn.output, /v8 belongs to user 65534, not to this user \(0\)/);
    }
  });

  it("at the cache path, a FIFO neither stops the start nor is read: said once, and replaced", async () => {
    const folder = tempFolder("compile-cache-");
    mkdirSync(join(folder, "petstore-mock"), { mode: 0o700 });
    execFileSync("mkfifo", [cacheIn(folder)]);
    const { status, output } = await listWith(folder, "dev-key-123");
    assert.equal(status, 200);
    assertSaidOnce(output, /v8 is a FIFO, not a regular file\n/);
    assert.ok(lstatSync(cacheIn(folder)).isFile(), "the FIFO was not replaced by a cache");
  });

  it("at the cache path, a symbolic link is not followed, even to a cache of its own, and its target is kept", async () => {
    const elsewhere = tempFolder("compile-cache-");
    assert.equal((await warmCache({ NODE_COMPILE_CACHE: elsewhere })).code, 0);
    const target = cacheIn(elsewhere);
    const before = readFileSync(target);
    const folder = tempFolder("compile-cache-");
    mkdirSync(join(folder, "petstore-mock"), { mode: 0o700 });
    symlinkSync(target, cacheIn(folder));
    const { status, output } = await listWith(folder, "dev-key-123");
    assert.equal(status, 200);
    assertSaidOnce(output, /v8 is a symbolic link, not a regular file\n/);
    assert.deepEqual(readFileSync(target), before, "the link's target was changed");
    assert.ok(lstatSync(cacheIn(folder)).isFile(), "the link was not replaced by a cache");
  });

  it("is written through a temporary file of its own, never through a link planted at a name it could guess", async () => {
    const folder = tempFolder("compile-cache-");
    mkdirSync(join(folder, "petstore-mock"), { mode: 0o700 });
    const target = join(folder, "precious");
    writeFileSync(target, "precious");
    const cache = cacheIn(folder);
    const warmed = await warmCache({ NODE_COMPILE_CACHE: folder }, (pid) =>
      symlinkSync(target, `${cache}.${pid}`),
    );
    assert.equal(warmed.code, 0, warmed.stderr);
    assert.equal(readFileSync(target, "utf8"), "precious");
    assert.ok(lstatSync(cache).isFile(), "the cache is not a file of its own");
    assert.equal(statSync(cache).mode & 0o777, 0o600);
  });

  it("is not read from a file or folder that others can write: said once, and the mock serves", async () => {
    const writableFile = tempFolder("compile-cache-");
    assert.equal((await warmCache({ NODE_COMPILE_CACHE: writableFile })).code, 0);
    chmodSync(cacheIn(writableFile), 0o646);
    const fromFile = await listWith(writableFile, "dev-key-123");
    assert.equal(fromFile.status, 200);
    assertSaidOnce(fromFile.output, /v8 is writable by others than its owner/);
    assert.equal(statSync(cacheIn(writableFile)).mode & 0o777, 0o600, "not replaced by a cache of its own");

    const writableFolder = tempFolder("compile-cache-");
    assert.equal((await warmCache({ NODE_COMPILE_CACHE: writableFolder })).code, 0);
    chmodSync(join(writableFolder, "petstore-mock"), 0o777);
    utimesSync(cacheIn(writableFolder), LONG_AGO, LONG_AGO);
    const fromFolder = await listWith(writableFolder, "dev-key-123");
    assert.equal(fromFolder.status, 200);
    assertSaidOnce(fromFolder.output, /petstore-mock is writable by others than its owner \(chmod go-w /);
    assert.equal(
      statSync(cacheIn(writableFolder)).mtime.getTime(),
      LONG_AGO.getTime(),
      "written in that folder",
    );
  });

  it("is not written by --help, --version or a refused option, whose cache would hold only what they compiled", async () => {
    const folder = tempFolder("compile-cache-");
    for (const args of [["--help"], ["--version"], ["--prot", "4010"]]) {
      const ran = await runToExit(args, { NODE_COMPILE_CACHE: folder });
      assert.notEqual(ran.stdout + ran.stderr, "", args.join(" "));
    }
    assert.deepEqual(readdirSync(folder), []);
  });

  it("replaces at the next start a cache in the earlier layout, which --help wrote with only what it compiled", async () => {
    const bundle = readFileSync(BUNDLE);
    const wrapped = `(function (exports, require, module, __filename, __dirname) { ${bundle.toString("latin1")}\n})`;
    const partial = new Script(wrapped, { filename: BUNDLE }).createCachedData();
    const sha1 = (...parts: Buffer[]) =>
      parts.reduce((hash, part) => hash.update(part), createHash("sha1")).digest();
    const folder = tempFolder("compile-cache-");
    const cache = plant(folder, Buffer.concat([sha1(Buffer.from("\0"), bundle), sha1(partial), partial]));
    utimesSync(cache, LONG_AGO, LONG_AGO);
    await serveOnce({ NODE_COMPILE_CACHE: folder });
    assert.notEqual(statSync(cache).mtime.getTime(), LONG_AGO.getTime(), "the partial cache was kept");
  });
});
