import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type PeerProcess, startJsonServer, startPrismMock } from "../../scripts/peers.ts";
import { BUNDLED_FIXTURES } from "../../server/options.ts";
import { runConformance } from "../suite/runner.ts";

const CREDENTIALS = ["no-header", "basic-scheme", "empty-token", "unknown-key"] as const;
const BAD_TOKENS = ["no-header", "basic-scheme", "empty-token"] as const;
const ORDERS = ["missing-order", "pending-order", "shipped-order"] as const;
const MALFORMED = ["letters", "fraction", "dash", "beyond-int64", "twenty-digits", "very-long"] as const;

async function failedChecks(start: () => Promise<PeerProcess>): Promise<string[]> {
  const peer = await start();
  try {
    const report = await runConformance({
      baseUrl: peer.url,
      apiKey: "dev-key-123",
      pendingOrderId: "2",
      shippedOrderId: "1",
    });
    return report.scenarios.flatMap((s) => s.checks.filter((c) => c.status === "failed").map((c) => c.id));
  } finally {
    await peer.stop();
  }
}

// Each test pins the exact set of failing checks, so a regression in either direction shows.
describe("the suite against tools nobody here wrote", () => {
  it("finds the defects of Prism's static mock", async () => {
    const failed = await failedChecks(() => startPrismMock());
    assert.deepEqual(failed, [
      // Its generated Error records say status 0; it checks only that some bearer token is present.
      ...BAD_TOKENS.map((v) => `list-unauthorized.${v}.error-status`),
      "list-unauthorized.unknown-key.status",
      ...ORDERS.flatMap((o) => [
        ...BAD_TOKENS.map((v) => `cancel-unauthorized.${o}.${v}.error-status`),
        `cancel-unauthorized.${o}.unknown-key.status`,
      ]),
      // No state: every cancel succeeds, even of orders that do not exist or have shipped, and again.
      "cancel-not-found.cancel.status",
      // It refuses ids that are not int64 with 422, as the default reading accepts, but its body is a
      // problem+json document, not an Error record; the fraction built on the absent id it answers
      // with a status openapi.yaml does not document.
      ...MALFORMED.map((v) => `cancel-malformed-id.${v}.${v === "fraction" ? "status" : "body"}`),
      "cancel-pending.cancel-again.status",
      // Its list is one generated example, so no named order is in it.
      "cancel-pending.pending-order-listed",
      "cancel-shipped.cancel.status",
      "cancel-shipped.cancel-again.status",
      "cancel-shipped.shipped-order-unchanged",
    ]);
  });

  it("finds the defects of json-server 0.17 serving the fixture orders", async () => {
    const failed = await failedChecks(() => startJsonServer(BUNDLED_FIXTURES));
    const listDefects = ["body", "no-status-field"];
    // The refused cancels run beside these lists (both change nothing on a server that refuses them) and
    // json-server carries them out: a list read after one of them is no longer the same bytes as the first,
    // so its defects are reported again, on every check that reads it. Which lists, depends on timing.
    const raced = (id: string) => /^list-unauthorized\.[^.]+\.(body|no-status-field)$/.test(id);
    for (const v of CREDENTIALS) {
      const reported = listDefects.filter((d) => failed.includes(`list-unauthorized.${v}.${d}`));
      assert.ok(reported.length === 0 || reported.length === listDefects.length, `${v}: ${reported}`);
    }
    assert.deepEqual(
      failed.filter((id) => !raced(id)),
      [
        // Ids rounded through doubles (2^63 - 1 becomes 2^63, beyond int64); the status is served as stored.
        ...listDefects.map((d) => `list-orders.list.${d}`),
        // No authentication at all; a list served to a refused request that is the same bytes as the first
        // has its defects reported once, there ("not judged again").
        ...CREDENTIALS.map((v) => `list-unauthorized.${v}.status`),
        // Query parameters filter and page the list: orders with int64 ids are missing with them. The one id
        // rounded beyond int64 cannot be read by id, so the rules are judged among the others.
        ...listDefects.map((d) => `list-no-paging.with-parameters.${d}`),
        "list-no-paging.list-ignores-paging-parameters",
        // Unauthenticated deletes succeed with 200; the later ones find nothing: 404 with an empty object.
        // With an id rounded beyond int64 no id is shown absent, so what needs an absent one is skipped.
        ...["pending-order", "shipped-order"].flatMap((o) => [
          `cancel-unauthorized.${o}.no-header.status`,
          ...CREDENTIALS.slice(1).flatMap((v) => [
            `cancel-unauthorized.${o}.${v}.status`,
            `cancel-unauthorized.${o}.${v}.body`,
          ]),
        ]),
        // Those deletes removed orders.
        "cancel-unauthorized.refusals-change-nothing",
        ...MALFORMED.filter((v) => v !== "fraction").map((v) => `cancel-malformed-id.${v}.body`),
        "cancel-pending.cancel.status",
        "cancel-pending.cancel.body",
        "cancel-pending.cancel-again.body",
        "cancel-shipped.cancel.status",
        "cancel-shipped.cancel.body",
        "cancel-shipped.cancel-again.status",
        "cancel-shipped.cancel-again.body",
      ],
    );
  });
});
