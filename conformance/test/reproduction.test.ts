import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { tempFolder } from "../../common/temp-folder.ts";
import {
  PENDING_ID,
  RACE_ID,
  SHIPPED_ID,
  TARGET_KEY,
  type TargetBehaviour,
  withTarget,
} from "../../test-support/target-server.ts";
import { renderMarkdown } from "../reports/markdown.ts";
import type { CheckResult, Report } from "../reports/report.ts";
import { renderCurl } from "../reports/reproduction.ts";
import { type ConformanceOptions, runConformance } from "../suite/runner.ts";

const run = promisify(execFile);
const folder = tempFolder("conformance-reproduction-");
const GATEWAY = { name: "X-Gateway-Key", value: "gateway-secret-7" };

async function failuresOf(
  behaviour: TargetBehaviour,
  options: Partial<ConformanceOptions> = {},
): Promise<{ failed: CheckResult[]; report: Report; url: string }> {
  return withTarget({ requireHeader: GATEWAY, ...behaviour }, async (url) => {
    const report = await runConformance({
      baseUrl: url,
      apiKey: TARGET_KEY,
      pendingOrderId: PENDING_ID,
      shippedOrderId: SHIPPED_ID,
      headers: { [GATEWAY.name]: GATEWAY.value },
      env: {},
      ...options,
    });
    const failed = report.scenarios.flatMap((s) => s.checks.filter((c) => c.status === "failed"));
    return { failed, report, url };
  });
}

/** Runs a reproduction as a QA engineer would: with the secrets in the environment, never in the text. */
async function shell(script: string): Promise<string[]> {
  const { stdout } = await run("sh", ["-c", script], {
    env: { PATH: process.env.PATH, PETSTORE_API_KEY: TARGET_KEY, X_GATEWAY_KEY: GATEWAY.value },
  });
  return [...stdout.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((match) => match[1] as string);
}

describe("reproductions of failed checks", () => {
  it("each failed response check's curl command, run through sh against the same server, gets the same status", async () => {
    // Each defect fails a different kind of request: a cancel, a Basic-scheme list, a refused cancel.
    const cases: Array<[TargetBehaviour, string]> = [
      [{ shippedCancellable: true }, "cancel-shipped"],
      [{ acceptsBasic: true }, "list-unauthorized"],
      [{ lookupBeforeAuth: true }, "cancel-unauthorized"],
    ];
    for (const [behaviour, scenario] of cases) {
      const { failed } = await failuresOf(behaviour, { only: [scenario] });
      const statusChecks = failed.filter((check) => check.id.endsWith(".status"));
      assert.ok(statusChecks.length > 0, `no failure for ${JSON.stringify(behaviour)}`);
      for (const check of statusChecks) {
        assert.ok(check.reproduce, `${check.id} has no reproduction`);
        assert.ok(!check.reproduce.includes(TARGET_KEY), "the key is a variable");
        assert.ok(!check.reproduce.includes(GATEWAY.value), "the masked header is a variable");
        assert.match(check.reproduce, /\$\{X_GATEWAY_KEY\}/);
        // A fresh server with the same defect: the run changed the first one's orders.
        const statuses = await withTarget({ requireHeader: GATEWAY, ...behaviour }, (url) =>
          shell(check.reproduce?.replace(/http:\/\/127\.0\.0\.1:\d+/g, new URL(url).origin) ?? ""),
        );
        assert.deepEqual(statuses, [String(check.response?.status)], check.id);
      }
    }
  });

  it("a state rule's reproduction replays the list, the scenario's requests and the list again", async () => {
    const { failed } = await failuresOf({ cancelsWhenRefused: true, removeCancelled: true });
    const rule = failed.find((check) => check.id === "cancel-unauthorized.refusals-change-nothing");
    assert.ok(rule?.reproduce, "the rule failed, with a reproduction");
    const commands = rule.reproduce.split(/^curl /m).filter(Boolean);
    assert.equal(commands.length, 1 + 12 + 1, "the list, the twelve refused cancels, the list");
    const statuses = await withTarget(
      { requireHeader: GATEWAY, cancelsWhenRefused: true, removeCancelled: true },
      async (url) => {
        const target = new URL(url);
        return shell(rule.reproduce?.replace(/http:\/\/127\.0\.0\.1:\d+/g, target.origin) ?? "");
      },
    );
    assert.deepEqual(statuses, ["200", ...Array(12).fill("401"), "200"]);
  });

  it("--reproduce-as fetch writes a snippet that Node runs with the same answer", async () => {
    const { failed } = await failuresOf(
      { shippedCancellable: true },
      { reproduceAs: "fetch", only: ["cancel-shipped"] },
    );
    const check = failed.find((c) => c.id === "cancel-shipped.cancel.status");
    assert.ok(check?.reproduce);
    assert.match(check.reproduce, /process\.env\.PETSTORE_API_KEY/);
    assert.ok(!check.reproduce.includes(TARGET_KEY));
    // The order was cancelled by the run; against a fresh target the snippet gets the same 204 again.
    const output = await withTarget({ requireHeader: GATEWAY, shippedCancellable: true }, async (url) => {
      const file = join(folder, "reproduce.mjs");
      writeFileSync(file, check.reproduce?.replace(/http:\/\/127\.0\.0\.1:\d+/g, new URL(url).origin) ?? "");
      const { stdout } = await run(process.execPath, [file], {
        env: { PATH: process.env.PATH, PETSTORE_API_KEY: TARGET_KEY, X_GATEWAY_KEY: GATEWAY.value },
      });
      return stdout;
    });
    assert.match(output, /DELETE http:\/\/127\.0\.0\.1:\d+\/v1\/store\/orders\/2 → 204/);
  });

  it("a race's reproduction sends its requests together: run again, the race shows again", async () => {
    for (const reproduceAs of ["curl", "fetch"] as const) {
      const { failed } = await failuresOf(
        { racyCancel: true },
        { only: ["cancel-race"], raceOrderId: RACE_ID, raceConcurrency: 5, reproduceAs },
      );
      const race = failed.find((check) => check.id === "cancel-race.cancel.one-204");
      assert.ok(race?.reproduce, "the race failed, with a reproduction");
      assert.ok(!race.reproduce.includes(TARGET_KEY) && !race.reproduce.includes(GATEWAY.value));
      // A fresh server with the same defect, its order pending again.
      const statuses = await withTarget({ requireHeader: GATEWAY, racyCancel: true }, async (url) => {
        const script = race.reproduce?.replace(/http:\/\/127\.0\.0\.1:\d+/g, new URL(url).origin) ?? "";
        const env = { PATH: process.env.PATH, PETSTORE_API_KEY: TARGET_KEY, X_GATEWAY_KEY: GATEWAY.value };
        if (reproduceAs === "curl") return (await run("sh", ["-c", script], { env })).stdout;
        const file = join(folder, "race.mjs");
        writeFileSync(file, script);
        return (await run(process.execPath, [file], { env })).stdout;
      });
      const cancelled = statuses.match(/\b204\b/g)?.length ?? 0;
      assert.ok(cancelled > 1, `${reproduceAs}: ${statuses}`);
    }
  });

  it("says --insecure and --cacert when the run used them", () => {
    const replay = { method: "GET", url: "https://staging.example/v1/store/orders", headers: [] };
    assert.match(
      renderCurl([replay], { insecure: true }),
      /^curl -sS -i --path-as-is -w '\\n' --insecure -X GET/,
    );
    assert.match(renderCurl([replay], { caFile: "/etc/ca's.pem" }), /--cacert '\/etc\/ca'\\''s\.pem'/);
  });

  it("the Markdown summary shows the first 20 failures with their reproductions, then a count", async () => {
    const { report } = await failuresOf({ down: 500 });
    const failed = report.summary.failed;
    assert.ok(failed > 20, `only ${failed} failures`);
    const markdown = renderMarkdown(report);
    const rows = markdown.split("\n").filter((line) => /^\| [a-z-]+ \| `/.test(line));
    assert.equal(rows.length, 20);
    assert.match(markdown, new RegExp(`…and ${failed - 20} more failed checks`));
    assert.equal((markdown.match(/^```sh$/gm) ?? []).length, 20);
    assert.ok(!markdown.includes(TARGET_KEY) && !markdown.includes(GATEWAY.value));
  });
});
