import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type {
  CancelOperation,
  GivenOrders,
  History,
  HistoryOperation,
  ListOperation,
} from "../model/history.ts";
import {
  checkHistory,
  commonChoices,
  describeChoices,
  describeFinding,
  type HistoryVerdict,
} from "../model/linearizability.ts";
import { ALL_RUN_CHOICES, type RunChoices } from "../model/spec-model.ts";
import { explainedByBruteForce } from "./brute-force-linearizability.ts";
import { modelRun, smallHistory } from "./generated-histories.ts";

const A = "9007199254740993";
const B = "9007199254740995";
const RECORDS = [`{"id":${A}}`, `{"id":${B}}`, `{"id":${A},"complete":true}`];

function history(given: Partial<GivenOrders>, operations: HistoryOperation[]): History {
  return {
    given: { pending: [], shipped: [], missing: [], unknown: [], ...given },
    records: RECORDS,
    operations,
  };
}

function cancel(
  orderId: string,
  sentAt: number,
  answeredAt: number | null,
  status: number | null,
): CancelOperation {
  return { op: "cancel", client: 0, orderId, sentAt, answeredAt, status };
}

/** A list read whole; `shown` maps each order it showed to its record's index in RECORDS. */
function list(sentAt: number, answeredAt: number, shown: Record<string, number>): ListOperation {
  return { op: "list", client: 1, sentAt, answeredAt, status: 200, shown: new Map(Object.entries(shown)) };
}

function onlyFinding(verdict: HistoryVerdict) {
  assert.equal(verdict.ok, false);
  assert.equal(verdict.findings.length, 1, JSON.stringify(verdict.findings));
  return verdict.findings[0] as NonNullable<(typeof verdict.findings)[0]>;
}

describe("checkHistory: hand-written histories", () => {
  it("passes one cancel of a pending order, and decides whether cancelled orders stay listed", () => {
    const stays = checkHistory(
      history({ pending: [A] }, [list(0, 5, { [A]: 0 }), cancel(A, 6, 9, 204), list(10, 12, { [A]: 0 })]),
    );
    assert.equal(stays.ok, true);
    assert.ok(stays.choices.every((choices) => choices.cancelledOrdersListed));
    const leaves = checkHistory(history({ pending: [A] }, [cancel(A, 6, 9, 204), list(10, 12, {})]));
    assert.equal(leaves.ok, true);
    assert.ok(leaves.choices.every((choices) => !choices.cancelledOrdersListed));
  });

  it("finds two 204s for one order, however concurrent", () => {
    const found = onlyFinding(
      checkHistory(history({ pending: [A] }, [cancel(A, 0, 10, 204), cancel(A, 1, 9, 204)])),
    );
    assert.deepEqual(
      [found.kind, found.rule, found.orderId, found.operations],
      ["violation", "cancel-once", A, [0, 1]],
    );
  });

  it("finds a 204 after a 409 was answered, and passes a 409 concurrent with the 204", () => {
    const after = checkHistory(history({ unknown: [A] }, [cancel(A, 0, 5, 409), cancel(A, 6, 9, 204)]));
    assert.deepEqual(
      [onlyFinding(after).rule, onlyFinding(after).operations],
      ["no-cancel-after-conflict", [0, 1]],
    );
    assert.equal(
      checkHistory(history({ pending: [A] }, [cancel(A, 0, 7, 409), cancel(A, 6, 9, 204)])).ok,
      true,
    );
  });

  it("finds a pending order answered 409 with nothing else: one operation is a counterexample", () => {
    const found = onlyFinding(checkHistory(history({ pending: [A] }, [cancel(A, 0, 5, 409)])));
    assert.deepEqual([found.rule, found.operations], ["cancel-answer-matches-state", [0]]);
    assert.equal(checkHistory(history({ unknown: [A] }, [cancel(A, 0, 5, 409)])).ok, true);
  });

  it("finds an order that vanished from the list without a 204, as a violation", () => {
    const found = onlyFinding(
      checkHistory(history({ pending: [A] }, [list(0, 3, { [A]: 0 }), list(4, 6, {})])),
    );
    assert.deepEqual([found.kind, found.rule, found.operations], ["violation", "listed-orders-stay", [1]]);
  });

  it("lets a cancel that never answered, or answered 500, explain a vanished order", () => {
    for (const [answeredAt, status] of [
      [null, null],
      [5, 500],
    ] as const) {
      const operations = [list(0, 3, { [A]: 0 }), cancel(A, 1, answeredAt, status), list(20, 22, {})];
      assert.equal(checkHistory(history({ pending: [A] }, operations)).ok, true);
    }
  });

  it("finds a changed record", () => {
    const found = onlyFinding(
      checkHistory(
        history({ pending: [A] }, [list(0, 3, { [A]: 0 }), cancel(A, 4, 5, 204), list(6, 8, { [A]: 2 })]),
      ),
    );
    assert.deepEqual(
      [found.kind, found.rule, found.operations],
      ["violation", "cancel-leaves-fields", [0, 2]],
    );
  });

  it("passes a record changed by a shipping outside the API that a 409 followed", () => {
    // Listed pending, shipped by the warehouse (complete, shipDate), refused with 409, listed shipped.
    const shipped = [list(0, 3, { [A]: 0 }), cancel(A, 4, 5, 409), list(6, 8, { [A]: 2 })];
    assert.equal(checkHistory(history({ unknown: [A] }, shipped)).ok, true);
    // The list of the new record may be answered before the 409: the shipping came before both.
    const early = [list(0, 3, { [A]: 0 }), list(4, 5, { [A]: 2 }), cancel(A, 6, 8, 409)];
    assert.equal(checkHistory(history({ unknown: [A] }, early)).ok, true);
  });

  it("finds a record change no shipping explains", () => {
    const violation = (given: Partial<GivenOrders>, operations: HistoryOperation[]) => {
      const found = onlyFinding(checkHistory(history(given, operations)));
      return [found.kind, found.rule, found.operations];
    };
    const changed = ["violation", "cancel-leaves-fields", [0, 2]];
    // No 409: nothing shows that the order left pending.
    assert.deepEqual(
      violation({ unknown: [A] }, [list(0, 3, { [A]: 0 }), cancel(A, 4, 5, 401), list(6, 8, { [A]: 2 })]),
      changed,
    );
    // A 204: the order was pending when cancelled, and a cancelled order does not ship.
    assert.deepEqual(
      violation({ unknown: [A] }, [
        list(0, 3, { [A]: 0 }),
        cancel(A, 4, 5, 204),
        cancel(A, 6, 7, 409),
        list(8, 9, { [A]: 2 }),
      ]),
      ["violation", "cancel-leaves-fields", [0, 3]],
    );
    // Three records: a shipping changes the record once.
    assert.deepEqual(
      violation({ unknown: [A] }, [
        list(0, 3, { [A]: 0 }),
        cancel(A, 4, 5, 409),
        list(6, 8, { [A]: 2 }),
        list(9, 10, { [A]: 1 }),
      ]),
      ["violation", "cancel-leaves-fields", [0, 2]],
    );
    // An order given as shipped was never pending during the run.
    assert.deepEqual(
      violation({ shipped: [A] }, [list(0, 3, { [A]: 0 }), cancel(A, 4, 5, 409), list(6, 8, { [A]: 2 })]),
      changed,
    );
  });

  it("finds a list that began after the 409 was answered and still shows the record before the shipping", () => {
    const operations = [
      list(0, 3, { [A]: 0 }),
      cancel(A, 4, 5, 409),
      list(9, 10, { [A]: 0 }),
      list(11, 12, { [A]: 2 }),
    ];
    const found = onlyFinding(checkHistory(history({ unknown: [A] }, operations)));
    assert.deepEqual(
      [found.kind, found.rule, found.staleMs, found.operations],
      ["stale", "stale-read", 4, [1, 2]],
    );
  });

  it("tells a stale read from a violation and measures its window", () => {
    const operations = [cancel(A, 0, 10, 204), list(12, 14, {}), list(30, 40, { [A]: 0 })];
    const strict = checkHistory(history({ pending: [A] }, operations));
    const found = onlyFinding(strict);
    assert.deepEqual(
      [found.kind, found.rule, found.staleMs, found.operations],
      ["stale", "stale-read", 20, [0, 2]],
    );
    assert.equal(strict.largestStaleMs, 20);
    const bounded = checkHistory(history({ pending: [A] }, operations), { allowStaleMs: 20 });
    assert.deepEqual([bounded.ok, bounded.largestStaleMs], [true, 20]);
    assert.equal(checkHistory(history({ pending: [A] }, operations), { allowStaleMs: 19 }).ok, false);
  });

  it("decides the run's choices once for every order", () => {
    const operations = [
      cancel(A, 0, 2, 204),
      cancel(B, 0, 2, 204),
      list(5, 6, { [A]: 0 }),
      list(7, 8, { [A]: 0 }),
    ];
    // Cancelled orders leave the list (B), so A's listing after its 204 is a stale read, not a second way.
    const found = onlyFinding(checkHistory(history({ pending: [A, B] }, operations)));
    assert.deepEqual([found.kind, found.orderId, found.staleMs], ["stale", A, 5]);
    const second = [cancel(A, 0, 2, 204), cancel(A, 3, 4, 404), cancel(B, 0, 2, 204), cancel(B, 3, 4, 409)];
    assert.equal(checkHistory(history({ pending: [A, B] }, second)).ok, false);
    const alike = checkHistory(history({ pending: [A, B] }, second.slice(0, 3)));
    assert.deepEqual(
      alike.choices.map((choices) => choices.secondCancelStatus),
      [404, 404],
    );
    assert.deepEqual(alike.choices.map(describeChoices), [
      "cancelled orders stay listed, a second cancel answers 404",
      "cancelled orders leave the list, a second cancel answers 404",
    ]);
  });

  it("never judges an order the run was not given", () => {
    const verdict = checkHistory(history({ pending: [A] }, [cancel(B, 0, 2, 204), cancel(B, 3, 4, 204)]));
    assert.deepEqual([verdict.ok, verdict.coverage.ordersJudged], [true, 0]);
  });

  it("counts the concurrency it saw", () => {
    const operations = [
      cancel(A, 0, 10, 204),
      cancel(A, 5, 12, 409),
      list(11, 13, { [A]: 0 }),
      list(20, 21, { [A]: 0 }),
    ];
    const { coverage } = checkHistory(history({ pending: [A] }, operations));
    assert.deepEqual(coverage, {
      operations: 4,
      ordersJudged: 1,
      concurrentPairs: 2,
      listsConcurrentWithCancels: 1,
    });
  });

  it("refuses a history with an operation answered before it was sent, in one line", () => {
    assert.throws(() => checkHistory(history({ pending: [A] }, [cancel(A, 5, 4, 204)])), {
      name: "RangeError",
      message: "operation #0 of the history was answered before it was sent, or has no time",
    });
    assert.throws(
      () => checkHistory(history({ pending: [A] }, [cancel(A, Number.NaN, null, null)])),
      RangeError,
    );
  });

  it("says a finding in one line: rule, order, each operation and the spec's sections", () => {
    const recorded = history({ pending: [A] }, [
      cancel(A, 0, 10, 204),
      list(12, 14, {}),
      list(30, 40, { [A]: 0 }),
    ]);
    const [found] = checkHistory(recorded).findings;
    assert.ok(found);
    assert.equal(
      describeFinding(found, recorded),
      `stale-read (stale read, at least 20 ms stale): order ${A}: #0 client 0 cancel 204 0 ms–10 ms; #2 client 1 list 200 with it 30 ms–40 ms (${found.spec})`,
    );
  });
});

function agreesWithBruteForce(recorded: History): void {
  const verdict = checkHistory(recorded);
  assert.equal(verdict.ok, explainedByBruteForce(recorded, 0));
  const violated = verdict.findings.some((found) => found.kind === "violation");
  assert.equal(violated, !explainedByBruteForce(recorded, Number.POSITIVE_INFINITY));
  if (violated) return;
  assert.equal(explainedByBruteForce(recorded, verdict.largestStaleMs), true);
  if (verdict.largestStaleMs > 0)
    assert.equal(explainedByBruteForce(recorded, verdict.largestStaleMs - 0.5), false);
  assert.equal(checkHistory(recorded, { allowStaleMs: verdict.largestStaleMs }).ok, true);
}

describe("checkHistory agrees with a brute-force search on generated histories", () => {
  it("on histories of random answers", () => {
    fc.assert(fc.property(smallHistory, agreesWithBruteForce), { numRuns: 3000 });
  });

  it("on histories a deployment following the model gives, stale or with one answer changed", () => {
    fc.assert(fc.property(modelRun, agreesWithBruteForce), { numRuns: 5000 });
  });
});

describe("checkHistory under the run's choices as earlier histories left them", () => {
  const LEAVE: readonly RunChoices[] = ALL_RUN_CHOICES.filter((choices) => !choices.cancelledOrdersListed);

  it("finds a stale read in a history that does not itself show that cancelled orders leave the list", () => {
    // Alone, list #1 is explained by cancelled orders staying listed; an earlier history showed they leave.
    const stale = history({ pending: [A] }, [cancel(A, 0, 10, 204), list(30, 40, { [A]: 0 })]);
    assert.equal(checkHistory(stale).ok, true);
    const found = onlyFinding(checkHistory(stale, { choices: LEAVE }));
    assert.deepEqual([found.kind, found.rule, found.staleMs], ["stale", "stale-read", 20]);
    assert.equal(explainedByBruteForce(stale, 0, LEAVE), false);
  });

  it("narrows the choices across passing histories, and keeps them when one disagrees", () => {
    const leaves = checkHistory(history({ pending: [A] }, [cancel(A, 6, 9, 204), list(10, 12, {})]));
    const second404 = checkHistory(history({ pending: [B] }, [cancel(B, 0, 2, 204), cancel(B, 3, 4, 404)]));
    const narrowed = commonChoices(commonChoices(ALL_RUN_CHOICES, leaves.choices), second404.choices);
    assert.deepEqual(narrowed, [{ cancelledOrdersListed: false, secondCancelStatus: 404 }]);
    assert.deepEqual(
      commonChoices(narrowed, [{ cancelledOrdersListed: true, secondCancelStatus: 409 }]),
      narrowed,
    );
  });

  it("agrees with a brute-force search restricted to the same choices", () => {
    const someChoices = fc.subarray([...ALL_RUN_CHOICES], { minLength: 1 });
    fc.assert(
      fc.property(modelRun, someChoices, (recorded, possible) => {
        const verdict = checkHistory(recorded, { choices: possible });
        assert.equal(verdict.ok, explainedByBruteForce(recorded, 0, possible));
        assert.ok(verdict.choices.every((choices) => possible.includes(choices)));
        for (const choices of possible)
          assert.equal(
            verdict.consistentChoices.includes(choices),
            explainedByBruteForce(recorded, Number.POSITIVE_INFINITY, [choices]),
          );
      }),
      { numRuns: 2000 },
    );
  });
});
