import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RUN_OPTION_NAMES } from "../judging/setting-names.ts";
import { SETTING_FLAGS as PROXY_FLAGS } from "../proxy/proxy-options.ts";
import { SETTING_FLAGS as SUITE_FLAGS } from "../suite/options.ts";
import { ConformanceUsageError, parseTargetUrl, routeTo, targetWarnings } from "../target/target.ts";

// The target layer the suite and the proxy share: the address, the way to it and what a start warns of,
// each problem naming the setting as the caller knows it.

describe("the target layer", () => {
  it("takes an absolute http(s) address and refuses others, naming the setting and never a credential", () => {
    assert.equal(parseTargetUrl("https://staging.example.test/v1", SUITE_FLAGS).host, "staging.example.test");
    assert.throws(
      () => parseTargetUrl("ftp://example.test/v1", PROXY_FLAGS),
      /^ConformanceUsageError: --upstream must be an http or https URL/,
    );
    assert.throws(
      () => parseTargetUrl("/v1", RUN_OPTION_NAMES),
      /^ConformanceUsageError: baseUrl must be an absolute http\(s\) URL/,
    );
    assert.throws(
      () => parseTargetUrl("https://user:s3cret@example.test/v1", SUITE_FLAGS),
      (error: Error) =>
        error instanceof ConformanceUsageError &&
        /^--base-url holds credentials/.test(error.message) &&
        !error.message.includes("s3cret"),
    );
    assert.throws(
      () => parseTargetUrl("https://example.test/v1?api_key=k", SUITE_FLAGS),
      /--base-url has a query or fragment/,
    );
  });

  it("finds the way through the proxy given, or the environment's, and refuses one that is no proxy", () => {
    const target = new URL("https://staging.example.test/v1");
    assert.equal(routeTo(target, {}, undefined, SUITE_FLAGS).proxy, undefined);
    assert.equal(routeTo(target, {}, "http://proxy.test:3128", SUITE_FLAGS).source, "--proxy");
    assert.equal(
      routeTo(target, { https_proxy: "proxy.test:3128" }, undefined, SUITE_FLAGS).source,
      "https_proxy",
    );
    assert.throws(
      () => routeTo(target, {}, "socks5://proxy.test", RUN_OPTION_NAMES),
      /^ConformanceUsageError: proxy must be an http:\/\/ or https:\/\/ proxy/,
    );
  });

  it("warns of an address off the interface version and of unchecked certificates, as the caller says it", () => {
    assert.deepEqual(
      targetWarnings(new URL("https://example.test/api"), true, PROXY_FLAGS, {
        role: "the upstream",
        who: "the proxy",
      }),
      [
        "the upstream https://example.test/api does not end with /v1, the path segment of the interface version (§9.1)",
        "certificates were not checked (--insecure): the proxy trusted whoever answered",
      ],
    );
    assert.deepEqual(
      targetWarnings(new URL("https://example.test/v1"), false, SUITE_FLAGS, {
        role: "the base URL",
        who: "the run",
      }),
      [],
    );
  });
});
