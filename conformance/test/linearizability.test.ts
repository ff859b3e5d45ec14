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
import { checkHistory, describeFinding, type HistoryVerdict } from "../model/linearizability.ts";
import {
  ALL_RUN_CHOICES,
  cancelAnswer,
  listShows,
  type OrderStatus,
  type RunChoices,
  startingStatuses,
} from "../model/spec-model.ts";
import { explainedByBruteForce } from "./brute-force-linearizability.ts";

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
      `stale-read (stale read, stale by 20 ms): order ${A}: #0 client 0 cancel 204 0 ms–10 ms; #2 client 1 list with it 200 30 ms–40 ms (${found.spec})`,
    );
  });
});

const ORDER_IDS = ["1", "2", "3"];
const KINDS = ["pending", "shipped", "missing", "unknown"] as const;

const givenOrders = fc
  .array(fc.constantFrom(...KINDS), { minLength: 1, maxLength: 2 })
  .map((kinds): GivenOrders => {
    const given: Record<(typeof KINDS)[number], string[]> = {
      pending: [],
      shipped: [],
      missing: [],
      unknown: [],
    };
    for (const [index, kind] of kinds.entries()) given[kind].push(ORDER_IDS[index] as string);
    return given;
  });

const span = fc.record({ sentAt: fc.integer({ min: 0, max: 12 }), length: fc.integer({ min: 0, max: 6 }) });

const cancelArbitrary = fc
  .record({
    span,
    orderId: fc.constantFrom(...ORDER_IDS),
    status: fc.constantFrom<number | null>(204, 204, 409, 409, 404, 401, 500, null),
  })
  .map(
    ({ span: { sentAt, length }, orderId, status }): CancelOperation => ({
      op: "cancel",
      client: 0,
      orderId,
      sentAt,
      answeredAt: status === null ? null : sentAt + length,
      status,
    }),
  );

const listArbitrary = fc
  .record({ span, shown: fc.array(fc.constantFrom(-1, -1, 0, 0, 1), { minLength: 3, maxLength: 3 }) })
  .map(({ span: { sentAt, length }, shown }): ListOperation => {
    const entries = ORDER_IDS.flatMap((id, index) =>
      (shown[index] ?? -1) < 0
        ? []
        : ([[id, Number(id) * 2 - 2 + (shown[index] as number)]] as [string, number][]),
    );
    return {
      op: "list",
      client: 1,
      sentAt,
      answeredAt: sentAt + length,
      status: 200,
      shown: new Map(entries),
    };
  });

const smallHistory = fc
  .record({
    given: givenOrders,
    operations: fc.array(fc.oneof(cancelArbitrary, listArbitrary), { minLength: 1, maxLength: 7 }),
  })
  .map(
    ({ given, operations }): History => ({
      given,
      records: ["a1", "a1'", "a2", "a2'", "a3", "a3'"],
      operations,
    }),
  );

/** Histories a deployment that follows the model gives, with lists read up to a few ms stale, then perhaps one answer changed. */
const modelRun = fc
  .record({
    given: givenOrders,
    choices: fc.constantFrom(...ALL_RUN_CHOICES),
    unknownStarts: fc.array(fc.constantFrom<OrderStatus>("pending", "shipped", "cancelled"), {
      minLength: 3,
      maxLength: 3,
    }),
    steps: fc.array(
      fc.record({
        span,
        isList: fc.boolean(),
        orderIndex: fc.nat(2),
        point: fc.double({ min: 0, max: 1, noNaN: true }),
        outcome: fc.constantFrom(
          "answered",
          "answered",
          "answered",
          "refused",
          "lost-taken",
          "lost-not-taken",
        ),
        staleBy: fc.constantFrom(0, 0, 4, 8, 12),
      }),
      { minLength: 1, maxLength: 7 },
    ),
    change: fc.option(
      fc.record({ step: fc.nat(6), status: fc.constantFrom(204, 404, 409), orderIndex: fc.nat(2) }),
      {
        freq: 4,
      },
    ),
  })
  .map(simulate);

type ModelRunInput = {
  given: GivenOrders;
  choices: RunChoices;
  unknownStarts: OrderStatus[];
  steps: Array<{
    span: { sentAt: number; length: number };
    isList: boolean;
    orderIndex: number;
    point: number;
    outcome: string;
    staleBy: number;
  }>;
  change: { step: number; status: number; orderIndex: number } | null;
};

function simulate({ given, choices, unknownStarts, steps, change }: ModelRunInput): History {
  const ids = [...given.pending, ...given.shipped, ...given.missing, ...given.unknown];
  const timeline = new Map<string, Array<{ at: number; status: OrderStatus }>>();
  for (const [index, id] of ids.entries()) {
    const start =
      startingStatuses(id, given).length > 1
        ? (unknownStarts[index] as OrderStatus)
        : startingStatuses(id, given)[0];
    timeline.set(id, [{ at: Number.NEGATIVE_INFINITY, status: start as OrderStatus }]);
  }
  const statusAt = (id: string, at: number) =>
    (timeline.get(id) ?? []).filter((entry) => entry.at <= at).at(-1)?.status ?? "absent";
  const byPoint = steps
    .map((step, index) => ({ ...step, index, at: step.span.sentAt + step.point * step.span.length }))
    .sort((a, b) => a.at - b.at);
  const operations: HistoryOperation[] = new Array(steps.length);
  for (const step of byPoint) {
    const { sentAt, length } = step.span;
    if (step.isList) {
      const shown = ids.flatMap((id, index) =>
        listShows(statusAt(id, step.at - step.staleBy), choices) ? [[id, index * 2] as [string, number]] : [],
      );
      operations[step.index] = {
        op: "list",
        client: 1,
        sentAt,
        answeredAt: sentAt + length,
        status: 200,
        shown: new Map(shown),
      };
      continue;
    }
    const orderId = ORDER_IDS[step.orderIndex] as string;
    const status = statusAt(orderId, step.at);
    const takesEffect = step.outcome === "answered" || step.outcome === "lost-taken";
    if (takesEffect && status === "pending")
      timeline.get(orderId)?.push({ at: step.at, status: "cancelled" });
    const lost = step.outcome.startsWith("lost");
    const answer = step.outcome === "refused" ? 401 : cancelAnswer(status, choices);
    operations[step.index] = cancel(orderId, sentAt, lost ? null : sentAt + length, lost ? null : answer);
  }
  if (change !== null) alter(operations, change);
  return { given, records: ["a1", "a1'", "a2", "a2'", "a3", "a3'"], operations };
}

function alter(
  operations: HistoryOperation[],
  change: { step: number; status: number; orderIndex: number },
): void {
  const operation = operations[change.step % operations.length] as HistoryOperation;
  const orderId = ORDER_IDS[change.orderIndex] as string;
  if (operation.op === "cancel") {
    if (operation.status !== null) operation.status = change.status;
  } else if (operation.shown?.has(orderId)) {
    const shown = new Map(operation.shown);
    shown.delete(orderId);
    operation.shown = shown;
  } else operation.shown = new Map([...(operation.shown ?? []), [orderId, change.orderIndex * 2]]);
}

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
