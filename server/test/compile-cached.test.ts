import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { tempFolder } from "../../common/temp-folder.ts";
import { startListeningProcess } from "../spawn-mock.ts";

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

/** `petstore-mock --warm-cache` to its exit: the code and what it wrote. */
async function warmCache(
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [COMMAND, "--warm-cache", "--quiet"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
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
