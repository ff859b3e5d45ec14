import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TARGET_KEY, type TargetBehaviour, withTarget } from "../../test-support/target-server.ts";
import { outcomeOf } from "../reports/outcome.ts";
import type { Report } from "../reports/report.ts";
import { runConformance } from "../suite/runner.ts";
import { createHttpClient } from "../target/http-client.ts";

function checksOf(report: Report) {
  return report.scenarios.flatMap((scenario) => scenario.checks);
}

function check(report: Report, id: string) {
  const found = checksOf(report).find((candidate) => candidate.id === id);
  assert.ok(
    found,
    `no check ${id} in ${checksOf(report)
      .map((c) => c.id)
      .join(", ")}`,
  );
  return found;
}

const run = (url: string, extra: Partial<Parameters<typeof runConformance>[0]> = {}) =>
  runConformance({ baseUrl: url, apiKey: TARGET_KEY, env: {}, ...extra });

describe("lists of any size", () => {
  // The whole suite against a million orders runs against the mock (server/test/generate.test.ts); here an
  // independent implementation serves them in chunks.
  test("a correct list of a million orders passes, judged whole, and its readings compare", async () => {
    await withTarget({ bulkOrders: 1_000_000 }, async (url) => {
      const report = await run(url, { only: ["list-orders", "cancel-unauthorized"] });
      const failed = checksOf(report).filter((c) => c.status === "failed");
      assert.deepEqual(failed, []);
      assert.equal(check(report, "list-orders.list.body").message, "an array of 1000003 Order records");
      assert.equal(check(report, "list-orders.list.unique-ids").message, "1000003 distinct ids");
      assert.equal(
        check(report, "cancel-unauthorized.refusals-change-nothing").message,
        "the list is the same before and after the refused requests",
      );
    });
  });

  test("a bad order deep in a big list is named by its index and id", async () => {
    await withTarget({ bulkOrders: 700_000, badOrderAt: 654_321 }, async (url) => {
      const report = await run(url, { only: ["list-orders"] });
      const body = check(report, "list-orders.list.body");
      assert.equal(body.status, "failed");
      assert.equal(
        body.message,
        "does not match openapi.yaml: orders[654321] (id 655318): quantity must be integer",
      );
      // The body shown is the part around that order, not the list's first bytes.
      const shown = body.response?.body ?? "";
      assert.match(shown, /^… bytes \d+–\d+ of \d+, from the first order at fault:\n/);
      assert.ok(shown.includes('{"id":655318,"petId":4318,"quantity":"2"'), shown.slice(0, 600));
      assert.ok(!shown.includes('"id":1000,'), "not the start of the list");
    });
  });

  test("a list of many bad orders reports the first ones and counts the rest, so the report stays small", async () => {
    await withTarget({ bulkOrders: 100_000, everyBulkOrderBad: true }, async (url) => {
      const report = await run(url, { only: ["list-orders"] });
      const body = check(report, "list-orders.list.body");
      assert.equal(body.status, "failed");
      assert.match(
        body.message,
        /^does not match openapi\.yaml: orders\[3\] \(id 1000\): quantity must be integer; /,
      );
      assert.match(body.message, /… 100000 of 100003 orders in all$/);
      assert.ok(JSON.stringify(report).length < 40_000, "the report of a broken list stays small");
    });
  });
});

describe("bodies that do not arrive whole", () => {
  for (const how of ["short-content-length", "unended-chunked"] as const) {
    test(`a list cut short (${how}) fails its body check with the bytes received, never as bad JSON`, async () => {
      await withTarget({ listCut: how }, async (url) => {
        const report = await run(url, { only: ["list-orders"] });
        const body = check(report, "list-orders.list.body");
        assert.equal(body.status, "failed");
        assert.match(body.message, /^the body broke off after \d+ bytes/);
        assert.doesNotMatch(body.message, /JSON/);
        if (how === "short-content-length")
          assert.match(body.message, /of the \d+ its Content-Length announced/);
      });
    });
  }

  test("a body past --max-body is not judged, never failed (the spec sets no size limit), naming the limit and the flag", async () => {
    await withTarget({ bulkOrders: 1000 }, async (url) => {
      const report = await run(url, { only: ["list-orders"], maxBodyBytes: 4096 });
      const body = check(report, "list-orders.list.body");
      assert.equal(body.status, "skipped");
      assert.equal(body.notJudged, true);
      assert.match(
        body.message,
        /^not judged: the body is larger than the 4 KiB maxBodyBytes allows \(stopped reading at \d+ bytes\)/,
      );
      assert.equal(report.summary.failed, 0);
      assert.equal(outcomeOf(report).verdict, "partial");
    });
  });

  test("a list that never ends is read up to --max-body and not judged past it; the run ends", async () => {
    await withTarget({ endlessList: true }, async (url) => {
      const report = await run(url, { only: ["list-orders"], maxBodyBytes: 8 * 1024 * 1024 });
      const body = check(report, "list-orders.list.body");
      assert.equal(body.notJudged, true);
      assert.match(body.message, /^not judged: the body is larger than the 8 MiB maxBodyBytes allows/);
    });
  });

  test("a list request on a kept-alive connection the server dropped is sent again on a fresh one", async () => {
    const behaviour: TargetBehaviour = { dropsReusedConnection: { dropped: 0 }, seen: { count: 0 } };
    await withTarget(behaviour, async (url) => {
      const report = await run(url, { only: ["list-orders"], concurrency: 1 });
      assert.equal(behaviour.dropsReusedConnection?.dropped, 1, "the target dropped a reused connection");
      assert.deepEqual(
        checksOf(report).filter((c) => c.status === "failed"),
        [],
      );
    });
  });

  test("a DELETE on a kept-alive connection the server dropped is reported as it came, never sent twice", async () => {
    const behaviour: TargetBehaviour = { dropsReusedConnection: { dropped: 0 }, seen: { count: 0 } };
    await withTarget(behaviour, async (url) => {
      const client = await createHttpClient(new URL(url), { timeoutMs: 5000, concurrency: 1 });
      try {
        const list = await client.send("GET", "/store/orders", { authorization: `Bearer ${TARGET_KEY}` });
        assert.equal(list.response?.status, 200);
        const cancel = await client.send("DELETE", "/store/orders/1", {
          authorization: `Bearer ${TARGET_KEY}`,
        });
        assert.equal(behaviour.dropsReusedConnection?.dropped, 1);
        assert.equal(cancel.response, undefined);
        assert.equal(cancel.staleConnection, true);
        assert.equal(behaviour.seen?.count, 2, "the DELETE reached the target once and was not sent again");
      } finally {
        client.close();
      }
    });
  });
});
