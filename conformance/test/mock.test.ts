import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createControlClient } from "../../contract/control-client.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { runConformance } from "../suite/runner.ts";
import { MOCK_KEY, MOCK_PENDING_ID, MOCK_RACE_ID, MOCK_SHIPPED_ID } from "./mock-ids.ts";

describe("the suite against the project's own mock", () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());

  const run = (session: string) =>
    runConformance({
      baseUrl: mock.url,
      apiKey: MOCK_KEY,
      pendingOrderId: MOCK_PENDING_ID,
      shippedOrderId: MOCK_SHIPPED_ID,
      raceOrderId: MOCK_RACE_ID,
      session,
    });

  it("passes every scenario, run after run on one mock, each run in a session of its own", async () => {
    for (const session of ["conformance-1", "conformance-2"]) {
      const report = await run(session);
      const failures = report.scenarios.flatMap((s) => s.checks.filter((c) => c.status !== "passed"));
      assert.deepEqual(failures, [], session);
      assert.equal(report.summary.skipped, 0);
      assert.equal(report.summary.failed, 0);
      assert.ok(report.scenarios.every((s) => s.status === "passed"));
      assert.deepEqual(report.warnings, []);
    }
  });

  it("a list with more orders than --max-memory keeps ids of is judged order by order; uniqueness and state rules are skipped, never passed or failed", async () => {
    // Room for the ids of five orders in each of the six readings a run holds (seven eighths of the account;
    // the rest holds bodies while they are the same as one judged): the twelve-order list is past it.
    const report = await runConformance({
      baseUrl: mock.url,
      apiKey: MOCK_KEY,
      pendingOrderId: MOCK_PENDING_ID,
      shippedOrderId: MOCK_SHIPPED_ID,
      raceOrderId: MOCK_RACE_ID,
      session: "conformance-small-memory",
      maxMemoryBytes: Math.ceil((5 * 32 * 6 * 8) / 7),
    });
    const checks = report.scenarios.flatMap((scenario) => scenario.checks);
    assert.deepEqual(
      checks.filter((check) => check.status === "failed"),
      [],
    );
    const skipped = checks.filter((check) => check.status === "skipped");
    assert.ok(
      skipped.some((check) => check.id.endsWith(".unique-ids")),
      "uniqueness not judged",
    );
    assert.ok(skipped.length >= 3, skipped.map((check) => check.id).join(", "));
    for (const check of skipped)
      assert.match(check.message, /more orders than the 5 whose ids the suite keeps within maxMemoryBytes/);
    assert.ok(
      checks.some((check) => check.id.endsWith(".body") && check.status === "passed"),
      "each order is still judged against the schema",
    );
  });

  it("reads the whole list once per need: the first reading serves the listOrders check, the last the race's", async () => {
    const listReads = async (session: string) =>
      (await createControlClient(mock.url, { session }).requests()).filter(
        (entry) => entry.method === "GET" && /^\/v1\/store\/orders(\?|$)/.test(entry.path),
      ).length;
    await run("conformance-reads");
    // Before and after the refused requests, with parameters, five among the racing cancels, after the cancels.
    assert.equal(await listReads("conformance-reads"), 9);
    const report = await runConformance({
      baseUrl: mock.url,
      apiKey: MOCK_KEY,
      session: "conformance-reads-none",
    });
    assert.equal(report.summary.failed, 0);
    // No cancel to play: the reading after the refused requests is the last one too.
    assert.equal(await listReads("conformance-reads-none"), 3);
  });

  it("cancels exactly the named order, in its session only", async () => {
    await run("conformance-scope");
    const statusIn = async (session?: string) => {
      const orders = await createControlClient(mock.url, session ? { session } : {}).orders();
      return Object.fromEntries(orders.map((order) => [order.id, order.status]));
    };
    const inSession = await statusIn("conformance-scope");
    const fixtures = await statusIn();
    assert.equal(inSession[MOCK_PENDING_ID], "cancelled", "the run cancelled the named order");
    assert.equal(fixtures[MOCK_PENDING_ID], "pending", "the default world is untouched");
    const changed = Object.keys(inSession).filter((id) => inSession[id] !== fixtures[id]);
    assert.deepEqual(
      changed.sort(),
      [MOCK_RACE_ID, MOCK_PENDING_ID].sort(),
      "the run cancelled nothing else",
    );
  });

  it("refuses a session name the mock would refuse, before sending anything", async () => {
    await assert.rejects(run("not valid"), /session must be 1 to 64 characters/);
  });
});
