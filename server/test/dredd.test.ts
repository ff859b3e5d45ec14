import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PENDING_ID, SHIPPED_ID, startTarget, TARGET_KEY } from "../../conformance/test/target-server.ts";
import { runDredd } from "../../scripts/dredd.ts";
import { startMockProcess } from "../spawn-mock.ts";
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
    const target = await startTarget({ conflictWithoutBody: true });
    try {
      const run = await runDredd(target.url, {
        apiKey: TARGET_KEY,
        pending: PENDING_ID,
        shipped: SHIPPED_ID,
        missing: "424242",
      });
      assert.equal(run.code, 0, run.output);
      assert.deepEqual(run.failed, []);
      assert.ok(run.passed.includes("DELETE (409) /store/orders/1"), run.output);
    } finally {
      await target.close();
    }
  });

  it("fails a server whose shipped orders can be cancelled (its hooks reach the right orders)", async () => {
    const broken = await startTarget({ shippedCancellable: true });
    try {
      const run = await runDredd(broken.url, {
        apiKey: TARGET_KEY,
        pending: PENDING_ID,
        shipped: SHIPPED_ID,
        missing: "424242",
      });
      assert.equal(run.code, 1, run.output);
      assert.deepEqual(run.failed, ["DELETE (409) /store/orders/1"]);
    } finally {
      await broken.close();
    }
  });
});
