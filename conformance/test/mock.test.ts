import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type MockProcess, startMockProcess } from "../../server/spawn-mock.ts";
import { runConformance } from "../runner.ts";
import { MOCK_KEY, MOCK_PENDING_ID, MOCK_SHIPPED_ID } from "./mock-ids.ts";

describe("the suite against the project's own mock", () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());

  it("passes every scenario with every scenario enabled, and cancels exactly the named order", async () => {
    const report = await runConformance({
      baseUrl: mock.url,
      apiKey: MOCK_KEY,
      pendingOrderId: MOCK_PENDING_ID,
      shippedOrderId: MOCK_SHIPPED_ID,
    });
    const failures = report.scenarios.flatMap((s) => s.checks.filter((c) => c.status !== "passed"));
    assert.deepEqual(failures, []);
    assert.equal(report.summary.skipped, 0);
    assert.equal(report.summary.failed, 0);
    assert.ok(report.scenarios.every((s) => s.status === "passed"));
    assert.deepEqual(report.warnings, []);

    const auth = { authorization: `Bearer ${MOCK_KEY}` };
    const cancelled = await fetch(`${mock.url}/store/orders/${MOCK_PENDING_ID}`, {
      method: "DELETE",
      headers: auth,
    });
    assert.equal(cancelled.status, 409, "the run cancelled the named order");
    const untouched = await fetch(`${mock.url}/store/orders/2`, { method: "DELETE", headers: auth });
    assert.equal(untouched.status, 204, "the run cancelled nothing else");
  });
});
