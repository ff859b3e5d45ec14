import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { startExploreTarget } from "../../test-support/explore-target.ts";
import { startSourceProxy } from "../../test-support/proxy-process.ts";
import { startMockProcess } from "../../test-support/spawn-mock.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-proxy-live-history-");

/** The failed checks of a proxy's JSON report, as `id: message`. */
function failures(report: Report): string[] {
  return report.scenarios
    .flatMap((scenario) => scenario.checks)
    .filter((check) => check.status === "failed")
    .map((check) => `${check.id}: ${check.message}`);
}

/** Runs `clients` concurrent loops of requests through the proxy, each from its own list of steps. */
async function concurrently(clients: ReadonlyArray<ReadonlyArray<() => Promise<unknown>>>): Promise<void> {
  await Promise.all(
    clients.map(async (steps) => {
      for (const step of steps) await step();
    }),
  );
}

describe("the proxy checks live traffic with the spec's model", () => {
  it("flags a backend that answers 204 twice for one order under concurrency, in explore's words", async () => {
    const target = await startExploreTarget({ defect: "check-then-act" });
    const json = join(folder, "double-204.json");
    const proxy = await startSourceProxy([
      "--upstream",
      target.url,
      "--fail-on-violation",
      "--reporter",
      `json:${json}`,
    ]);
    let code: number | null;
    try {
      const { pending } = target.create(6, 0);
      const headers = { authorization: `Bearer ${target.key}` };
      const cancel = (id: string) => () =>
        fetch(`${proxy.url}/store/orders/${id}`, { method: "DELETE", headers }).then((answer) =>
          answer.text(),
        );
      // Two cancels of each order at once: the backend reads pending for both before either writes.
      await concurrently([pending.map(cancel), pending.map(cancel)]);
    } finally {
      ({ code } = await proxy.stop("SIGTERM"));
      await target.close();
    }
    assert.equal(code, 1, "a finding fails the proxy's gate");
    const found = failures(JSON.parse(readFileSync(json, "utf8")) as Report);
    assert.ok(found.length > 0, "the double 204 is flagged");
    for (const failure of found)
      assert.match(
        failure,
        /^state\.cancel-once: cancel-once \(violation\): order \d+: #\d client \d+ cancel 204 [\d.]+ ms–[\d.]+ ms; #\d client \d+ cancel 204 /,
      );
  });

  it("finds nothing in the mock under concurrent lists and cancels", async () => {
    const mock = await startMockProcess(["--quiet"]);
    const json = join(folder, "mock.json");
    const proxy = await startSourceProxy([
      "--upstream",
      mock.url,
      "--fail-on-violation",
      "--reporter",
      `json:${json}`,
    ]);
    let code: number | null;
    try {
      const headers = { authorization: "Bearer dev-key-123" };
      const list = () => fetch(`${proxy.url}/store/orders`, { headers }).then((answer) => answer.json());
      const orders = (await list()) as Array<{ id: number | string }>;
      const ids = orders.slice(0, 12).map((order) => String(order.id));
      assert.ok(ids.length >= 4, "the mock has orders to cancel");
      const cancel = (id: string) => () =>
        fetch(`${proxy.url}/store/orders/${id}`, { method: "DELETE", headers }).then((answer) =>
          answer.text(),
        );
      // Each client cancels every order, in its own order, with lists in between: cancels and lists overlap.
      const client = (shift: number) =>
        ids.flatMap((_, index) => [cancel(ids[(index + shift) % ids.length] as string), list]);
      await concurrently([client(0), client(3), client(6), client(9)]);
    } finally {
      ({ code } = await proxy.stop("SIGTERM"));
      await mock.stop();
    }
    assert.equal(code, 0, "nothing fails the proxy's gate");
    const report = JSON.parse(readFileSync(json, "utf8")) as Report;
    assert.deepEqual(failures(report), []);
    const state = report.scenarios.find((scenario) => scenario.id === "state");
    const judged = state?.checks.find((check) => check.id === "state.cancel-answer-matches-state");
    assert.equal(judged?.status, "passed", "the model judged the traffic");
  });
});
