import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ProxyProcess, startSourceProxy } from "../../test-support/proxy-process.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import type { Report } from "../reports/report.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";

const folder = tempFolder("conformance-state-barrier-");
const KEY = "dev-key-123";

/** The failed checks of a proxy's JSON report, as `id: message`. */
function failures(report: Report): string[] {
  return report.scenarios
    .flatMap((scenario) => scenario.checks)
    .filter((check) => check.status === "failed")
    .map((check) => `${check.id}: ${check.message}`);
}

/** The mock with the proxy in front of it, gating on violations; `run` gets the proxy's /v1 address. */
async function throughTheProxy(
  name: string,
  run: (proxy: ProxyProcess, mock: MockProcess) => Promise<void>,
): Promise<{ code: number | null; report: Report }> {
  const mock = await startMockProcess(["--quiet"]);
  const json = join(folder, `${name}.json`);
  let proxy: ProxyProcess | undefined;
  let code: number | null = null;
  try {
    proxy = await startSourceProxy([
      "--upstream",
      mock.url,
      "--fail-on-violation",
      "--reporter",
      `json:${json}`,
    ]);
    await run(proxy, mock);
  } finally {
    if (proxy) ({ code } = await proxy.stop("SIGTERM"));
    await mock.stop();
  }
  return { code, report: JSON.parse(readFileSync(json, "utf8")) as Report };
}

describe("writes outside the contract through the proxy are barriers to the state rules", () => {
  it("takes a second 204 after POST /__control/reset as a new round, not a second cancel", async () => {
    const { code, report } = await throughTheProxy("reset", async (proxy) => {
      const headers = { authorization: `Bearer ${KEY}` };
      const round = async () => {
        const list = await fetch(`${proxy.url}/store/orders`, { headers });
        assert.equal(list.status, 200);
        await list.arrayBuffer();
        const cancel = await fetch(`${proxy.url}/store/orders/3`, { method: "DELETE", headers });
        assert.equal(cancel.status, 204);
      };
      await round();
      // The reset before each test that docs/control-api.md shows, sent through the proxy.
      const reset = await fetch(new URL("/__control/reset", proxy.url), { method: "POST" });
      assert.equal(reset.status, 204);
      await round();
    });
    assert.deepEqual(failures(report), []);
    assert.equal(code, 0, "nothing fails the proxy's gate");
    // The proxy numbers the exchanges itself, from its own first.
    const restarted =
      /the state rules started again after 1 write outside the contract \(first: #\d+ POST \/__control\/reset\)/;
    assert.ok(
      report.warnings.some((warning) => restarted.test(warning)),
      report.warnings.join("\n"),
    );
    const cancelOnce = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .find((c) => c.id === "state.cancel-once");
    assert.equal(cancelOnce?.status, "passed", "both 204s were put to the test, each in its own round");
  });

  it("finds nothing in explore --hooks mock-control run through it", async () => {
    let explored = { code: -1, stdout: "", stderr: "" };
    const { report } = await throughTheProxy("explore", async (proxy) => {
      explored = await cli(
        ["explore", "--base-url", proxy.url, "--api-key", KEY, "--hooks", "mock-control", "--budget", "3s"],
        NO_PROXY_ENV,
      );
    });
    assert.equal(explored.code, 0, explored.stdout + explored.stderr);
    assert.deepEqual(failures(report), []);
    const state = report.scenarios.find((scenario) => scenario.id === "state");
    // Between the hook's writes the rules still judge explore's cancels.
    const cancelOnce = state?.checks.find((check) => check.id === "state.cancel-once");
    assert.equal(cancelOnce?.status, "passed", "the state rules judged the rounds between the hook's writes");
    assert.ok(
      report.warnings.some((warning) =>
        /the state rules started again after \d+ writes? outside the contract/.test(warning),
      ),
      report.warnings.join("\n"),
    );
  });
});
