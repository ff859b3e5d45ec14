import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runDredd } from "../../scripts/dredd.ts";
import { startMockProcess } from "../../test-support/spawn-mock.ts";
import {
  PENDING_ID,
  SHIPPED_ID,
  startTarget,
  TARGET_KEY,
  type TargetBehaviour,
} from "../../test-support/target-server.ts";
import { DEV_KEY } from "./support.ts";

const ALL_TRANSACTIONS = [
  "GET (200) /store/orders",
  "GET (401) /store/orders",
  "DELETE (204) /store/orders/1",
  "DELETE (401) /store/orders/1",
  "DELETE (404) /store/orders/1",
  "DELETE (409) /store/orders/1",
];

describe("Dredd as an independent judge of the mock", () => {
  it("passes every documented response of both operations", async () => {
    const mock = await startMockProcess(["--quiet"]);
    try {
      const run = await runDredd(mock.url, {
        apiKey: DEV_KEY,
        pending: "9007199254740993",
        shipped: "9223372036854775807",
        missing: "424242",
        jsonContentType: "application/json; charset=utf-8",
      });
      assert.equal(run.code, 0, run.output);
      assert.deepEqual(run.passed, ALL_TRANSACTIONS);
      assert.deepEqual(run.failed, []);
      assert.match(run.summary, /^complete: 6 passing, 0 failing, 0 errors, 0 skipped, 6 total$/);
    } finally {
      await mock.stop();
    }
  });

  it("passes a 409 without a body, which the spec allows (openapi.yaml declares it optional)", async () => {
    const run = await dreddAgainstTarget({ conflictWithoutBody: true });
    assert.equal(run.code, 0, run.output);
    assert.deepEqual(run.failed, []);
    assert.ok(run.passed.includes("DELETE (409) /store/orders/1"), run.output);
  });

  it("fails a server whose shipped orders can be cancelled (its hooks reach the right orders)", async () => {
    const run = await dreddAgainstTarget({ shippedCancellable: true });
    assert.equal(run.code, 1, run.output);
    assert.deepEqual(run.failed, ["DELETE (409) /store/orders/1"]);
  });
});

/** Dredd run against one of the suite's test servers, with its key and orders. */
async function dreddAgainstTarget(behaviour: TargetBehaviour) {
  const target = await startTarget(behaviour);
  try {
    return await runDredd(target.url, {
      apiKey: TARGET_KEY,
      pending: PENDING_ID,
      shipped: SHIPPED_ID,
      missing: "424242",
    });
  } finally {
    await target.close();
  }
}
