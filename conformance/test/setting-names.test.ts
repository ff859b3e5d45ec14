import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runProxy } from "../proxy/run-proxy.ts";
import { runConformance } from "../suite/runner.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";

// One problem, named as each caller knows the setting: a program by the option it passed, each command by
// its own flag. The library writes no flag itself.

const NOT_A_URL = "staging.example.test/v1";

describe("a message names the setting as its caller knows it", () => {
  it("runConformance and runProxy name their options", async () => {
    await assert.rejects(
      runConformance({ baseUrl: NOT_A_URL, apiKey: "k", env: {} }),
      /^ConformanceUsageError: baseUrl must be an absolute http\(s\) URL/,
    );
    await assert.rejects(
      runConformance({ baseUrl: "http://127.0.0.1:9/v1", apiKey: "k", env: {}, only: ["nope"] }),
      /^ConformanceUsageError: only names no scenario nope .*; see SCENARIOS\)$/,
    );
    await assert.rejects(
      runProxy({ upstream: NOT_A_URL, port: 0, env: {} }),
      /^ConformanceUsageError: upstream must be an absolute http\(s\) URL/,
    );
  });

  it("petstore-conformance and its proxy name their flags", async () => {
    const suite = await cli(["--base-url", NOT_A_URL, "--api-key", "k"], NO_PROXY_ENV);
    assert.equal(suite.code, 2);
    assert.match(suite.stderr, /^error: --base-url must be an absolute http\(s\) URL/m);
    const proxy = await cli(["proxy", "--upstream", NOT_A_URL, "--port", "0"], NO_PROXY_ENV);
    assert.equal(proxy.code, 2);
    assert.match(proxy.stderr, /^error: --upstream must be an absolute http\(s\) URL/m);
    const credentials = await cli(
      ["proxy", "--upstream", "http://user:pw@127.0.0.1:9/v1", "--port", "0"],
      NO_PROXY_ENV,
    );
    assert.match(
      credentials.stderr,
      /--upstream holds credentials .*the API key goes in the client's own Authorization header \(the proxy passes it on\), and what a gateway needs in --header/,
    );
  });
});
