import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseProxyOptions } from "../../conformance/proxy/proxy-options.ts";
import { parseCliOptions as suiteOptions } from "../../conformance/suite/options.ts";
import { parseCliOptions as mockOptions } from "../../server/options.ts";
import { MAX_TIMER_MS, parseByteSize, parseDuration, parsePort, parseWholeNumber } from "../option-values.ts";

const SUITE = ["--base-url", "http://127.0.0.1:1/v1", "--api-key", "k"];
const PROXY = ["--upstream", "http://127.0.0.1:1/v1"];

describe("one parser for each kind of flag value", () => {
  it("reads a size with or without a unit, and says what is wrong with one it refuses", () => {
    assert.equal(parseByteSize("--x", "500000"), 500_000);
    assert.equal(parseByteSize("--x", "90MB"), 90_000_000);
    assert.equal(parseByteSize("--x", "2GiB"), 2 * 1024 ** 3);
    assert.throws(
      () => parseByteSize("--max-memory", "0"),
      /^UsageError: --max-memory must be at least 1 byte \(got "0"\)$/,
    );
    assert.throws(() => parseByteSize("--max-memory", "0MiB"), /must be at least 1 byte/);
    assert.throws(
      () => parseByteSize("--max-memory", "abc"),
      /--max-memory must be a size like 500000, 90MB or 2GiB \(got "abc"\)/,
    );
  });

  it("reads a duration with any unit, the same in every flag", () => {
    assert.equal(parseDuration("--x", "500ms"), 500);
    assert.equal(parseDuration("--x", "90s"), 90_000);
    assert.equal(parseDuration("--x", "30m"), 1_800_000);
    assert.equal(parseDuration("--x", "2h"), 7_200_000);
    assert.equal(suiteOptions([...SUITE, "--timeout", "10s"], {}).run.timeoutMs, 10_000);
    assert.equal(parseProxyOptions([...PROXY, "--deadline", "2m"], {}).proxy.deadlineMs, 120_000);
    assert.equal(suiteOptions([...SUITE, "--max-retry-wait", "500ms"], {}).run.maxRetryWaitMs, 500);
  });

  it("refuses a bare number in every duration flag of the three commands, showing it with ms and s", () => {
    const refusal = (flag: string) => new RegExp(`${flag} 10 needs a unit: 10ms or 10s\\?$`);
    for (const flag of ["--timeout", "--deadline", "--max-retry-wait"])
      assert.throws(() => suiteOptions([...SUITE, flag, "10"], {}), refusal(flag));
    for (const flag of ["--timeout", "--deadline", "--request-timeout", "--flush-every"])
      assert.throws(() => parseProxyOptions([...PROXY, flag, "10"], {}), refusal(flag));
    assert.throws(() => mockOptions(["--session-idle", "10"], {}), refusal("--session-idle"));
    assert.equal(mockOptions(["--session-idle", "90s"], {}).sessionIdleMs, 90_000);
    assert.equal(suiteOptions(SUITE, {}).run.timeoutMs, 10_000, "the defaults carry their unit too");
  });

  it("bounds a duration by what a timer can wait, or by the flag's own limit", () => {
    assert.equal(parseDuration("--x", `${MAX_TIMER_MS}ms`), MAX_TIMER_MS);
    assert.throws(() => parseDuration("--x", `${MAX_TIMER_MS + 1}ms`), /24\.8 days/);
    assert.throws(() => parseDuration("--x", "0ms"), /from 1ms/);
    assert.throws(() => mockOptions(["--session-idle", "8d"], {}), /--session-idle must be a duration/);
    assert.throws(() => mockOptions(["--session-idle", "169h"], {}), /to 7 days/);
  });

  it("reads a port the same in the mock and the proxy", () => {
    assert.equal(parsePort("--port", "0"), 0);
    assert.equal(mockOptions(["--port", "65535"], {}).port, 65535);
    assert.equal(parseProxyOptions([...PROXY, "--port", "0"], {}).proxy.port, 0);
    for (const bad of ["65536", "-1", "80a", ""]) {
      assert.throws(
        () => mockOptions([`--port=${bad}`], {}),
        /--port must be a whole number from 0 to 65535/,
      );
      assert.throws(
        () => parseProxyOptions([...PROXY, `--port=${bad}`], {}),
        /--port must be a whole number from 0 to 65535/,
      );
    }
  });

  it("reads whole numbers within their bounds", () => {
    assert.equal(parseWholeNumber("--n", "1"), 1);
    assert.throws(() => parseWholeNumber("--n", "0"), /--n must be a positive whole number/);
    assert.throws(() => parseWholeNumber("--n", "11", { minimum: 0, maximum: 10 }), /from 0 to 10/);
  });
});
