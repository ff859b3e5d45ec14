import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseProxyOptions } from "../../conformance/proxy/proxy-options.ts";
import { parseCliOptions as suiteOptions } from "../../conformance/suite/options.ts";
import { parseCliOptions as mockOptions } from "../../server/options.ts";
import { runMainToExit } from "../../test-support/spawn-mock.ts";
import { nearestFlag } from "../command-line.ts";

const SUITE = ["--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"];
const PROXY = ["--upstream", "http://127.0.0.1:9/v1"];

describe("the command line's messages", () => {
  it("an unknown flag in each of the three commands: did you mean the one it was near?", () => {
    assert.throws(() => mockOptions(["--prot", "4010"], {}), {
      message: "unknown option --prot: did you mean --port?",
    });
    assert.throws(() => suiteOptions(["--base-ur", "http://x/v1"], {}), {
      message: "unknown option --base-ur: did you mean --base-url?",
    });
    assert.throws(() => parseProxyOptions([...PROXY, "--reporer", "json"], {}), {
      message: "unknown option --reporer: did you mean --reporter?",
    });
    assert.throws(() => mockOptions(["--zzzzzz"], {}), { message: "unknown option --zzzzzz" });
    assert.equal(nearestFlag("--timout", ["timeout", "deadline"]), "timeout");
    assert.equal(nearestFlag("--sess", ["session", "strict"]), "session");
  });

  it("an empty environment variable is said to be empty, not unset", () => {
    assert.throws(() => suiteOptions(["--api-key", "k"], { PETSTORE_BASE_URL: "" }), {
      message: "--base-url is required, and the environment variable PETSTORE_BASE_URL is empty",
    });
    assert.throws(() => parseProxyOptions([], { PETSTORE_UPSTREAM: "" }), {
      message: "--upstream is required, and the environment variable PETSTORE_UPSTREAM is empty",
    });
    assert.throws(() => suiteOptions([...SUITE, "--header-from-env", "X-Token=TOKEN"], { TOKEN: "" }), {
      message: "--header-from-env X-Token: the environment variable TOKEN is empty",
    });
    assert.throws(() => suiteOptions([...SUITE, "--header-from-env", "X-Token=TOKEN"], {}), {
      message: "--header-from-env X-Token: the environment variable TOKEN is not set",
    });
  });

  it("a flag given an empty value, or followed by another flag, is said so in one line", () => {
    assert.throws(() => parseProxyOptions(["--upstream", ""], {}), {
      message: "--upstream is empty: give it a value (or set PETSTORE_UPSTREAM)",
    });
    assert.throws(() => suiteOptions(["--base-url", "", "--api-key", "k"], {}), {
      message: "--base-url is empty: give it a value (or set PETSTORE_BASE_URL)",
    });
    assert.throws(() => suiteOptions(["--base-url", "--api-key", "k"], {}), {
      message:
        "--base-url is followed by another option, not by its value: give it one (quote a variable that may be empty), or --base-url=-VALUE for a value that begins with a dash",
    });
  });

  it("a flag last with no value, an argument without --, a pasted Bearer: each said with its fix", () => {
    assert.throws(() => suiteOptions(["--base-url", "http://127.0.0.1:9/v1", "--api-key"], {}), {
      message: "--api-key needs a value after it, and none was given (quote a variable that may be empty)",
    });
    assert.throws(() => parseProxyOptions([...PROXY, "sh", "-c", "npm test"], {}), {
      message:
        "unexpected argument 'sh': to run a command, put -- before it (petstore-conformance proxy [options] -- sh ...)",
    });
    assert.throws(() => suiteOptions([...SUITE, "extra"], {}), {
      message:
        "unexpected argument 'extra': this command takes options only (did a value lose its option, or its quotes?)",
    });
    for (const key of ["Bearer s3cret", "bearer  s3cret"]) {
      assert.throws(
        () => suiteOptions(["--base-url", "http://127.0.0.1:9/v1", "--api-key", key], {}),
        (error: Error) => {
          assert.match(error.message, /^--api-key takes the key alone: drop "[Bb]earer " before it/);
          assert.doesNotMatch(error.message, /s3cret/);
          return true;
        },
      );
    }
    assert.throws(() => suiteOptions(["--base-url", "http://127.0.0.1:9/v1"], { PETSTORE_API_KEY: "a b" }), {
      message:
        "--api-key must be letters, digits and - . _ ~ + / (then = padding only), as a Bearer token is",
    });
  });

  it("--version prints the package's version alone, in every command", async () => {
    const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    const bin = fileURLToPath(new URL("../../conformance/bin.ts", import.meta.url));
    const mock = fileURLToPath(new URL("../../server/main.ts", import.meta.url));
    for (const args of [[bin], [bin, "proxy"], [bin, "explore"], [mock]]) {
      const { stdout, status } = spawnSync(process.execPath, ["--import", "tsx", ...args, "--version"], {
        encoding: "utf8",
      });
      assert.equal(status, 0, args.join(" "));
      assert.equal(stdout, `${version}\n`);
    }
  });

  it("the mock on a port in use says what to do, with the proxy's exit code", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = taken.address() as { port: number };
      const result = await runMainToExit(["--port", String(port), "--quiet"]);
      assert.equal(result.code, 2);
      assert.equal(
        result.stderr,
        `error: port ${port} on 127.0.0.1 is in use: pick another with --port (0 for any free one)\n`,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
