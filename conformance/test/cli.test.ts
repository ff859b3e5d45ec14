import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { XMLParser } from "fast-xml-parser";
import { tempFolder } from "../../common/temp-folder.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { type RunningTarget, SHIPPED_ID, startTarget, TARGET_KEY } from "../../test-support/target-server.ts";
import type { Report } from "../reports/report.ts";
import { MOCK_KEY, MOCK_PENDING_ID, MOCK_RACE_ID, MOCK_SHIPPED_ID } from "./mock-ids.ts";
import { cli } from "./run-cli.ts";

describe("petstore-conformance (the CLI, end to end)", () => {
  let mock: MockProcess;
  // A fresh broken target per test: its defect changes its state, so runs must not share one.
  let broken: RunningTarget;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  beforeEach(async () => {
    broken = await startTarget({ shippedCancellable: true });
  });
  afterEach(() => broken.close());
  after(() => mock.stop());

  it("exits 0 on a conforming target, with a JSON report and the int64 id sent exactly", async () => {
    const result = await cli(
      [
        "--base-url",
        mock.url,
        "--pending-order-id",
        MOCK_PENDING_ID,
        "--shipped-order-id",
        MOCK_SHIPPED_ID,
        "--race-order-id",
        MOCK_RACE_ID,
        "--reporter",
        "json",
        "--session",
        "cli-run",
      ],
      { PETSTORE_API_KEY: MOCK_KEY },
    );
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.summary.failed, 0);
    assert.equal(report.summary.skipped, 0);
    assert.ok(report.summary.passed > 100);
    assert.equal(report.target, mock.url);
    for (const scenario of report.scenarios) {
      assert.deepEqual(
        Object.keys(scenario).filter((k) => !["reason"].includes(k)),
        ["id", "title", "status", "checks"],
      );
    }
    assert.ok(!result.stdout.includes(MOCK_KEY), "the key never appears in the report");
    const cancelPath = `/v1/store/orders/${MOCK_PENDING_ID}`;
    const cancel = (session?: string) =>
      fetch(`${mock.url}/store/orders/${MOCK_PENDING_ID}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${MOCK_KEY}`, ...(session ? { "x-mock-session": session } : {}) },
      });
    assert.equal(
      (await cancel("cli-run")).status,
      409,
      `${cancelPath} was cancelled by the run, in its session`,
    );
    assert.equal((await cancel()).status, 204, "the default world was left alone");
  });

  it("exits 1 on a broken target, with JUnit XML that names the failing scenario", async () => {
    const result = await cli([
      "--base-url",
      broken.url,
      "--api-key",
      TARGET_KEY,
      "--shipped-order-id",
      SHIPPED_ID,
      "--reporter",
      "junit",
    ]);
    assert.equal(result.code, 1, result.stderr);
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(result.stdout);
    const suite = xml.testsuites.testsuite;
    const cases = suite.testcase as Array<{ name: string; failure?: { message: string }; skipped?: unknown }>;
    assert.equal(cases.length, 9);
    assert.equal(Number(suite.failures), 1);
    assert.equal(Number(suite.skipped), 2, "the pending and race scenarios, without their orders");
    const failed = cases.filter((c) => c.failure);
    assert.deepEqual(
      failed.map((c) => c.name.split(":")[0]),
      ["cancel-shipped"],
    );
    assert.match(failed[0]?.failure?.message ?? "", /cancel-shipped\.cancel\.status: expected 409, got 204/);
    assert.ok(cases.find((c) => c.name.startsWith("cancel-pending"))?.skipped !== undefined);
    assert.ok(!result.stdout.includes(TARGET_KEY));
  });

  it("prints a plain pretty report when not on a terminal and writes --output", async () => {
    const output = join(tempFolder("conformance-cli-"), "report.json");
    const result = await cli([
      "--base-url",
      broken.url,
      "--api-key",
      TARGET_KEY,
      "--shipped-order-id",
      SHIPPED_ID,
      "--reporter",
      "json",
      "--output",
      output,
    ]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.ok(!result.stdout.includes("\u001b["), "no colour codes in a pipe");
    assert.match(result.stdout, /✖ cancel-shipped/);
    assert.match(result.stdout, /spec: §3, §4\.2/);
    assert.match(result.stdout, /request: DELETE \/v1\/store\/orders\/2/);
    assert.match(result.stdout, /authorization: Bearer \*\*\*/);
    assert.match(result.stdout, /^\d+ passed, 1 failed, \d+ skipped$/m);
    assert.ok(!result.stdout.includes(TARGET_KEY));
    const written = JSON.parse(readFileSync(output, "utf8")) as Report;
    assert.equal(written.summary.failed, 1);
    const failedCheck = written.scenarios.flatMap((s) => s.checks).find((c) => c.status === "failed");
    assert.equal(failedCheck?.request?.headers.authorization, "Bearer ***");
    assert.equal(failedCheck?.response?.status, 204);
  });

  it("exits 2 with one line on bad usage and on an unreachable target", async () => {
    const missing = await cli(["--api-key", "k"]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error: --base-url \(or PETSTORE_BASE_URL\) is required/);
    const badId = await cli([
      "--base-url",
      mock.url,
      "--api-key",
      "k",
      "--pending-order-id",
      "9223372036854775808",
    ]);
    assert.equal(badId.code, 2);
    assert.match(badId.stderr, /--pending-order-id must be an int64 integer/);
    const badReporter = await cli(["--base-url", mock.url, "--api-key", "k", "--reporter", "xml"]);
    assert.equal(badReporter.code, 2);
    const closed = await startTarget();
    await closed.close();
    const unreachable = await cli(["--base-url", closed.url, "--api-key", "k"]);
    assert.equal(unreachable.code, 2);
    assert.match(
      unreachable.stderr,
      /^error: nothing accepts connections at 127\.0\.0\.1:\d+ \(ECONNREFUSED\): is the service running, and is --base-url right\?/,
    );
    assert.equal(unreachable.stderr.trim().split("\n").length, 1, "one line, no stack trace");
  });

  it("exits 2 with one line, and lists no check, when the target refuses the key", async () => {
    const refused = await cli(["--base-url", mock.url, "--api-key", "expired-key-0042"]);
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.match(
      refused.stderr,
      /^error: the target refused the API key: GET http:\/\/127\.0\.0\.1:\d+\/v1\/store\/orders with it was answered 401\. Check that --api-key \(or PETSTORE_API_KEY\)/,
    );
    assert.equal(refused.stderr.trim().split("\n").length, 1, "one line");
    assert.equal(refused.stdout, "", "no report of 401s as contract failures");
    assert.ok(!refused.stderr.includes("expired-key-0042"));
  });

  it("warns when the base URL does not end in /v1", async () => {
    const result = await cli(["--base-url", mock.url.replace(/\/v1$/, "/api"), "--api-key", MOCK_KEY]);
    assert.match(result.stdout, /warning: the base URL .* does not end with \/v1/);
  });
});
