import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { UsageError } from "../../common/command-line.ts";
import { MAX_TIMER_MS } from "../../common/option-values.ts";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ProxyCliOptions, parseProxyOptions } from "../proxy/proxy-options.ts";
import { runProxy } from "../proxy/run-proxy.ts";
import { type CliOptions, parseCliOptions } from "../suite/options.ts";
import { runConformance } from "../suite/runner.ts";
import { ConformanceUsageError } from "../target/target.ts";

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
          () => parse(flag, `${MAX_TIMER_MS + 1}ms`),
          new RegExp(`${flag} must be a duration .* to ${MAX_TIMER_MS}ms`),
        );
        refused(() => parse(flag, "2147483648ms"), /about 24.8 days/);
      }
    }
    const options = suite("--deadline", `${MAX_TIMER_MS}ms`);
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

// What http.request refuses to send: line breaks that would split the request, NUL, and characters no
// Latin-1 byte holds, in a header's name and in its value.
const BAD_HEADER_TEXT = { "CR LF": "a\r\nInjected: 1", NUL: "a\0b", "non-Latin-1": "кл\u{1f511}ч" };

describe("headers added to every request, checked once at start", () => {
  const withEnv = (env: NodeJS.ProcessEnv) => ({
    suite: (...flags: string[]) =>
      parseCliOptions(["--base-url", "http://127.0.0.1:1/v1", "--api-key", "k", ...flags], env),
    proxy: (...flags: string[]) => parseProxyOptions(["--upstream", "http://127.0.0.1:1/v1", ...flags], env),
  });

  it("--header and --header-from-env with CR LF, NUL or a character past Latin-1, in name or value: one line naming the flag, the value never shown", () => {
    for (const [kind, text] of Object.entries(BAD_HEADER_TEXT)) {
      const { suite, proxy } = withEnv({ TOKEN_VALUE: `secret${text}`, TOKEN: "secret" });
      for (const parse of [suite, proxy]) {
        refused(
          () => parse("--header", `X-Key: secret${text}`),
          /^--header X-Key: the value holds a character no header can carry/,
        );
        refused(() => parse("--header", `X-${text}: v`), /^--header takes 'Name: value'/);
        refused(
          () => parse("--header-from-env", "X-Key=TOKEN_VALUE"),
          /^--header-from-env X-Key: the value holds a character/,
        );
        refused(
          () => parse("--header-from-env", `X-${text}=TOKEN`),
          /^--header-from-env takes Name=VARIABLE/,
        );
        assert.throws(
          () => parse("--header-from-env", "X-Key=TOKEN_VALUE"),
          (error: Error) => !error.message.includes("secret") && !/[\r\n\0]/.test(error.message),
          kind,
        );
      }
    }
  });

  it("a value with spaces, tabs and Latin-1 letters passes; the line break a variable ends with is trimmed", () => {
    const { suite, proxy } = withEnv({ TOKEN: "s3cr\u00e9t\tkey\n" });
    const fromSuite = suite(
      "--header",
      "X-Note: caf\u00e9 au lait",
      "--header-from-env",
      "X-Key=TOKEN",
    ) as CliOptions;
    const fromProxy = proxy(
      "--header",
      "X-Note: caf\u00e9 au lait",
      "--header-from-env",
      "X-Key=TOKEN",
    ) as ProxyCliOptions;
    const expected = { "X-Note": "caf\u00e9 au lait", "X-Key": "s3cr\u00e9t\tkey" };
    assert.deepEqual(fromSuite.run.headers, expected);
    assert.deepEqual(fromProxy.proxy.headers, expected);
  });

  it("runConformance and runProxy refuse such headers before any request, naming their option", async () => {
    for (const text of Object.values(BAD_HEADER_TEXT)) {
      for (const headers of [{ "X-Key": `v${text}` }, { [`X-${text}`]: "v" }]) {
        const refusal = (error: unknown) => {
          assert.ok(error instanceof ConformanceUsageError, String(error));
          assert.match(error.message, /^headers /);
          assert.equal(error.message.split("\n").length, 1);
          return true;
        };
        // Port 1 answers nothing: a check that came after the first request would fail differently.
        await assert.rejects(
          runConformance({ baseUrl: "http://127.0.0.1:1/v1", apiKey: "k", headers, env: {} }),
          refusal,
        );
        await assert.rejects(
          runProxy({ upstream: "http://127.0.0.1:1/v1", port: 0, headers, env: {} }),
          refusal,
        );
      }
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
