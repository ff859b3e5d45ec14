import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { UsageError } from "../../common/command-line.ts";
import { MAX_TIMER_MS } from "../../common/option-values.ts";
import { tempFolder } from "../../common/temp-folder.ts";
import { parseProxyOptions } from "../live/proxy-options.ts";
import { parseCliOptions } from "../options.ts";

const folder = tempFolder("petstore-options-");
after(() => rmSync(folder, { recursive: true, force: true }));

const suite = (...flags: string[]) =>
  parseCliOptions(["--base-url", "http://127.0.0.1:1/v1", "--api-key", "k", ...flags], {});
const proxy = (...flags: string[]) =>
  parseProxyOptions(["--upstream", "http://127.0.0.1:1/v1", ...flags], {});

function refused(parse: () => unknown, message: RegExp): void {
  assert.throws(parse, (error: unknown) => {
    assert.ok(error instanceof UsageError, String(error));
    assert.match(error.message, message);
    assert.equal(error.message.split("\n").length, 1);
    return true;
  });
}

describe("command-line values past what the process can honour", () => {
  it("--deadline and --timeout past a timer's range are refused, not wrapped round to 1 ms", () => {
    for (const parse of [suite, proxy]) {
      for (const flag of ["--deadline", "--timeout"]) {
        refused(
          () => parse(flag, String(MAX_TIMER_MS + 1)),
          new RegExp(`${flag} must be a duration .* to ${MAX_TIMER_MS} ms`),
        );
        refused(() => parse(flag, "2147483648"), /about 24.8 days/);
      }
    }
    const options = suite("--deadline", String(MAX_TIMER_MS));
    assert.equal(options.run.deadlineMs, MAX_TIMER_MS);
  });

  it("--ca-file, --cert and --key that are a device, a FIFO, a folder or too large are refused in one line naming the file", () => {
    const fifo = join(folder, "pipe.pem");
    execFileSync("mkfifo", [fifo]);
    const huge = join(folder, "huge.pem");
    writeFileSync(huge, "");
    truncateSync(huge, 64 * 1024 * 1024);
    const key = join(folder, "key.pem");
    writeFileSync(key, "not read when the cert is refused");
    for (const parse of [suite, proxy]) {
      refused(() => parse("--ca-file", "/dev/zero"), /^--ca-file \/dev\/zero: not a regular file/);
      refused(() => parse("--ca-file", fifo), /pipe\.pem: not a regular file/);
      refused(() => parse("--ca-file", folder), /not a regular file/);
      refused(
        () => parse("--ca-file", huge),
        /huge\.pem: 67108864 bytes, larger than a PEM file may be \(16 MiB\)/,
      );
      refused(() => parse("--cert", "/dev/zero", "--key", key), /^--cert \/dev\/zero: not a regular file/);
      refused(() => parse("--ca-file", join(folder, "absent.pem")), /absent\.pem: cannot read it \(ENOENT\)/);
    }
  });
});

describe("the judge's reader limits as flags", () => {
  it("--max-depth, --max-string and --max-number reach the judge of both commands; nonsense is refused", () => {
    const flags = ["--max-depth", "200", "--max-string", "64MiB", "--max-number", "100"];
    const expected = { maxDepth: 200, maxStringBytes: 64 * 1024 * 1024, maxNumberChars: 100 };
    const fromSuite = suite(...flags);
    const fromProxy = proxy(...flags);
    assert.ok(!("help" in fromSuite && fromSuite.help === true));
    assert.deepEqual((fromSuite as { run: { readerLimits?: unknown } }).run.readerLimits, expected);
    assert.deepEqual((fromProxy as { proxy: { readerLimits?: unknown } }).proxy.readerLimits, expected);
    for (const parse of [suite, proxy]) {
      refused(() => parse("--max-depth", "0"), /--max-depth must be a positive whole number/);
      refused(() => parse("--max-number", "many"), /--max-number must be a positive whole number/);
      refused(() => parse("--max-string", "lots"), /--max-string/);
    }
  });
});
