import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createControlClient } from "../../contract/control-client.ts";
import {
  type ExploreDefect,
  type ExploreTarget,
  startExploreTarget,
} from "../../test-support/explore-target.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { type ExploreOptions, type ExploreResult, explore } from "../explore/explore.ts";
import { renderExploreJson } from "../explore/report-json.ts";
import { ALL_RUN_CHOICES } from "../model/spec-model.ts";
import { runConformance } from "../suite/runner.ts";
import type { ConformanceHooks } from "../target/hook-types.ts";
import * as mockControl from "../target/mock-control-hooks.ts";
import { explainedByBruteForce } from "./brute-force-linearizability.ts";
import { MOCK_KEY } from "./mock-ids.ts";

// Budgets are bounds on how long a search may run, never judged: each test judges what was found.
const SEARCH_MS = 10_000;
const SEEDS = [1, 2, 3];

/** Fresh orders from the test backend, a few at a time, so that each history's orders are the newest. */
function provisionFrom(target: ExploreTarget): ConformanceHooks {
  return {
    provision: (_context, wanted) => target.create(Math.min(wanted.pending, 4), Math.min(wanted.shipped, 2)),
  };
}

/** Whether the suite's fixed scenarios fail against the target, given fresh orders of every kind. */
async function fixedScenariosFail(target: ExploreTarget): Promise<boolean> {
  const made = target.create(2, 1);
  const report = await runConformance({
    baseUrl: target.url,
    apiKey: target.key,
    pendingOrderId: made.pending[0] as string,
    raceOrderId: made.pending[1] as string,
    shippedOrderId: made.shipped[0] as string,
    missingOrderId: "123",
    env: {},
  });
  return report.summary.failed > 0;
}

/** Searches seed after seed until one finds something; the last result otherwise. */
async function firstFinding(options: Omit<ExploreOptions, "seed">): Promise<ExploreResult> {
  let result: ExploreResult | undefined;
  for (const seed of SEEDS) {
    result = await explore({ ...options, seed });
    if (result.finding) return result;
  }
  return result as ExploreResult;
}

describe("explore against the project's mock", () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());

  it("finds nothing over several seeds, with clients that overlapped on one order", async () => {
    for (const seed of SEEDS) {
      const result = await explore({
        baseUrl: mock.url,
        apiKey: MOCK_KEY,
        hooks: "mock-control",
        session: `explore-${seed}`,
        seed,
        budgetMs: 1500,
      });
      assert.equal(result.finding, undefined, `seed ${seed}`);
      assert.equal(result.ended, "budget");
      assert.ok(result.coverage.histories > 0);
      assert.ok(result.coverage.concurrentPairs > 0, "no two operations on one order overlapped");
      assert.ok(result.coverage.listsConcurrentWithCancels > 0, "no list overlapped a cancel");
      assert.ok(result.coverage.listsReadWhole > 0 && result.coverage.cancelsDecided > 0);
      assert.equal(result.coverage.keyRefused, 0);
    }
  });

  // A run whose answers say nothing the model decides by is no pass: the gate says it judged nothing.
  const judgesNothing: [string, object[], RegExp][] = [
    [
      "lists and cancels answered 500",
      [
        { operation: "listOrders", status: 500 },
        { operation: "cancelOrder", status: 500 },
      ],
      /^explore judged nothing: none of its \d+ lists was read whole \(the first: answered 500\)/,
    ],
    [
      "lists cut short",
      [{ operation: "listOrders", fault: "truncate" }],
      /^explore judged nothing: none of its \d+ lists was read whole \(the first: /,
    ],
    [
      "cancels answered 503",
      [{ operation: "cancelOrder", status: 503 }],
      /^explore judged nothing: none of its \d+ cancels got an answer the model decides by \(204, 404 or 409; got 503 ×\d+\)/,
    ],
    [
      "cancels answered 401",
      [{ operation: "cancelOrder", status: 401 }],
      /^the target refused the run's API key \(401\) in \d+ of \d+ requests after accepting it at the start/,
    ],
  ];
  for (const [name, rules, said] of judgesNothing) {
    it(`refuses to pass a run whose ${name}: it judged nothing`, async () => {
      const session = `explore-unjudged-${name.replaceAll(" ", "-")}`;
      await createControlClient(mock.url, { session }).behaviour({ rules } as never);
      await assert.rejects(
        explore({
          baseUrl: mock.url,
          apiKey: MOCK_KEY,
          hooks: "mock-control",
          session,
          seed: 4,
          budgetMs: 600,
        }),
        (error: Error) => error.name === "ConformanceUsageError" && said.test(error.message),
      );
    });
  }
});

describe("explore against a target that sends 100 Continue before every answer", () => {
  it("reads past it as HTTP asks and finds nothing in a correct backend", async () => {
    const target = await startExploreTarget({ continueFirst: true });
    try {
      const result = await explore({
        baseUrl: target.url,
        apiKey: target.key,
        hooks: provisionFrom(target),
        seed: 3,
        budgetMs: 500,
      });
      assert.equal(result.finding, undefined);
      assert.ok(result.coverage.orders > 0);
    } finally {
      await target.close();
    }
  });
});

describe("explore with the mock-control hook and no session", () => {
  it("is sent in the session the hook made, says so, and leaves the default world as it was", async () => {
    const mock = await startMockProcess(["--quiet"]);
    try {
      const listed = () =>
        fetch(`${mock.url}/store/orders`, { headers: { authorization: `Bearer ${MOCK_KEY}` } }).then(
          (answer) => answer.text(),
        );
      const before = await listed();
      const result = await explore({
        baseUrl: mock.url,
        apiKey: MOCK_KEY,
        hooks: "mock-control",
        seed: 2,
        budgetMs: 500,
      });
      assert.equal(result.finding, undefined);
      assert.ok(result.coverage.orders > 0);
      assert.ok(
        result.warnings.some((warning) =>
          /a session of the mock's own, conformance-[0-9a-f]+, so the run was sent in it/.test(warning),
        ),
        result.warnings.join("; "),
      );
      assert.equal(await listed(), before);
    } finally {
      await mock.stop();
    }
  });
});

describe("explore's release hook against the project's mock", () => {
  it("is given each history's pending and provisioned shipped orders once it is over, and mock-control removes them", async () => {
    const mock = await startMockProcess(["--quiet"]);
    try {
      const released: string[] = [];
      const result = await explore({
        baseUrl: mock.url,
        apiKey: MOCK_KEY,
        hooks: {
          provision: mockControl.provision,
          release: async (context, orderIds) => {
            released.push(...orderIds);
            await mockControl.release(context, orderIds);
          },
        },
        session: "explore-release",
        seed: 1,
        budgetMs: 500,
      });
      assert.equal(result.finding, undefined);
      assert.ok(released.length >= result.coverage.orders, "every pending order used, and shipped ones");
      assert.equal(new Set(released).size, released.length);
      const control = createControlClient(mock.url, { session: "explore-release" });
      for (const id of released.slice(0, 8)) assert.equal(await control.order(id), undefined, id);
    } finally {
      await mock.stop();
    }
  });
});

describe("explore against backends with one concurrency defect", () => {
  // suiteFinds: whether the fixed scenarios (runConformance) fail on it too; explore finds every one.
  const planted: Array<{
    defect: ExploreDefect;
    /** The rules a minimal history of it may break: a stale cache shows a vanished order as well as a stale one. */
    rule: string | readonly string[];
    removeCancelled: boolean;
    suiteFinds: boolean;
  }> = [
    { defect: "check-then-act", rule: "cancel-once", removeCancelled: false, suiteFinds: true },
    { defect: "replica-lag", rule: "stale-read", removeCancelled: true, suiteFinds: false },
    {
      defect: "stale-list-cache",
      rule: ["stale-read", "listed-orders-stay"],
      removeCancelled: true,
      suiteFinds: false,
    },
    {
      defect: "number-id-cache",
      rule: "cancel-answer-matches-state",
      removeCancelled: false,
      suiteFinds: true,
    },
    { defect: "shifted-pages", rule: "listed-orders-stay", removeCancelled: true, suiteFinds: false },
  ];
  for (const { defect, rule, removeCancelled, suiteFinds } of planted) {
    const suiteSays = suiteFinds ? "the fixed scenarios find it too" : "the fixed scenarios miss it";
    it(`${defect}: found, shrunk to at most a dozen operations, no order of them explains it; ${suiteSays}`, async () => {
      const target = await startExploreTarget({ defect, removeCancelled, echoKey: true });
      try {
        // A race the fixed scenarios catch may slip by one run on a loaded machine: found in one of three.
        let suiteFailed = await fixedScenariosFail(target);
        for (let again = 0; again < 2 && suiteFinds && !suiteFailed; again++)
          suiteFailed = await fixedScenariosFail(target);
        assert.equal(suiteFailed, suiteFinds);
        const result = await firstFinding({
          baseUrl: target.url,
          apiKey: target.key,
          hooks: provisionFrom(target),
          clients: 4,
          steps: 5,
          // The default histories at once (16): replays crowd the target as the search did.
          budgetMs: SEARCH_MS,
          shrinkBudgetMs: 30_000,
          replays: 3,
          finalReplays: 5,
        });
        const finding = result.finding;
        assert.ok(finding, `nothing found with seeds ${SEEDS.join(", ")}`);
        assert.equal(result.ended, "finding");
        const minimal = finding.minimal;
        assert.ok(
          minimal.verdict.findings.some((one) => [rule].flat().includes(one.rule)),
          minimal.verdict.findings.map((one) => one.rule).join(", "),
        );
        assert.ok(minimal.history.operations.length <= 12, `${minimal.history.operations.length} operations`);
        assert.ok(minimal.history.operations.length <= finding.original.history.operations.length);
        // No finding without proof: an independent search over every order finds none that explains it
        // under the run's choices, and each other choice is ruled out by a history of the run at any staleness.
        assert.equal(explainedByBruteForce(minimal.history, result.allowStaleMs, finding.choices), false);
        for (const { choices, history } of finding.ruledOut)
          assert.equal(explainedByBruteForce(history, Number.POSITIVE_INFINITY, [choices]), false);
        assert.equal(finding.choices.length + finding.ruledOut.length, ALL_RUN_CHOICES.length);
        // Five replays, or on to 40 until one fails; each smaller program was tried at least --replays times.
        const { failed, of } = finding.reproduced;
        assert.ok(of >= 5 && (failed > 0 || of === 40), `failed ${failed} of ${of}`);
        assert.ok(finding.originalReproduced.of > 0 && finding.triesPerCandidate >= 3);
        assert.doesNotMatch(renderExploreJson(result), new RegExp(target.key), "a record echoed the key");
        const given = new Set([...minimal.history.given.pending, ...minimal.history.given.shipped]);
        assert.ok(minimal.history.operations.every((op) => op.op === "list" || given.has(op.orderId)));
      } finally {
        await target.close();
      }
    });
  }

  it("--allow-stale above the replica's lag accepts it, and says the largest staleness seen", async () => {
    const target = await startExploreTarget({ defect: "replica-lag", removeCancelled: true });
    try {
      const result = await explore({
        baseUrl: target.url,
        apiKey: target.key,
        hooks: provisionFrom(target),
        seed: 1,
        budgetMs: 3000,
        allowStaleMs: 200,
      });
      assert.equal(result.finding, undefined);
      assert.ok(result.largestStaleMs > 0);
      assert.ok(result.largestStaleMs <= 200);
    } finally {
      await target.close();
    }
  });
});

describe("explore's orders", () => {
  let target: ExploreTarget;
  before(async () => {
    target = await startExploreTarget();
  });
  after(() => target.close());

  it("cancels only orders it was given, each pending one in one history, and stops when they are used up", async () => {
    const given = target.create(9, 2);
    const result = await explore({
      baseUrl: target.url,
      apiKey: target.key,
      orderIds: { ...given, missing: ["42"] },
      seed: 4,
      budgetMs: 30_000,
    });
    assert.equal(result.finding, undefined);
    assert.equal(result.ended, "orders");
    assert.ok(result.coverage.orders <= 9);
    const allowed = new Set([...given.pending, ...given.shipped, "42"]);
    assert.ok(target.deletes.length > 0);
    for (const id of target.deletes) assert.ok(allowed.has(id), `cancelled ${id}, never given`);
  });

  it("a correct backend that removes cancelled orders from the list passes", async () => {
    const removing = await startExploreTarget({ removeCancelled: true });
    try {
      const result = await explore({
        baseUrl: removing.url,
        apiKey: removing.key,
        hooks: provisionFrom(removing),
        seed: 5,
        budgetMs: 1500,
      });
      assert.equal(result.finding, undefined);
    } finally {
      await removing.close();
    }
  });
});
