/**
 * Small histories for comparing the checkers with brute force: random answers, and answers a deployment
 * following the model gives (lists read a few ms stale, cancels lost with or without effect, perhaps an
 * order shipped outside the API with its record changed), perhaps with one answer changed.
 */

import fc from "fast-check";
import type {
  CancelOperation,
  GivenOrders,
  History,
  HistoryOperation,
  ListOperation,
} from "../model/history.ts";
import {
  ALL_RUN_CHOICES,
  cancelAnswer,
  listShows,
  mayShipUnseen,
  type OrderStatus,
  type RunChoices,
  startingStatuses,
} from "../model/spec-model.ts";

export const ORDER_IDS = ["1", "2", "3"];
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

export const smallHistory = fc
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
export const modelRun = fc
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
    shipping: fc.option(fc.record({ orderIndex: fc.nat(1), at: fc.integer({ min: 0, max: 18 }) }), {
      freq: 4,
    }),
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
  /** The warehouse ships this order, if the run was not told its status and it is pending then. */
  shipping: { orderIndex: number; at: number } | null;
};

function simulate({ given, choices, unknownStarts, steps, change, shipping }: ModelRunInput): History {
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
  const warehouse = shipper(shipping, ids, given, statusAt, timeline);
  const operations: HistoryOperation[] = new Array(steps.length);
  for (const step of byPoint) {
    const { sentAt, length } = step.span;
    warehouse.shipIfDue(step.at);
    if (step.isList) {
      const point = step.at - step.staleBy;
      const shown = ids.flatMap((id, index) =>
        listShows(statusAt(id, point), choices)
          ? [[id, warehouse.recordAt(id, index, point)] as [string, number]]
          : [],
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
    operations[step.index] = {
      op: "cancel",
      client: 0,
      orderId,
      sentAt,
      answeredAt: lost ? null : sentAt + length,
      status: lost ? null : answer,
    };
  }
  if (change !== null) alter(operations, change);
  return { given, records: ["a1", "a1'", "a2", "a2'", "a3", "a3'"], operations };
}

/**
 * The warehouse's shipping of one order the run was not told the status of, which the simulation reaches
 * at its instant: none when the order is not pending then. Its record after the shipping is its other one.
 */
function shipper(
  shipping: ModelRunInput["shipping"],
  ids: readonly string[],
  given: GivenOrders,
  statusAt: (id: string, at: number) => OrderStatus,
  timeline: Map<string, Array<{ at: number; status: OrderStatus }>>,
) {
  const shippedId = shipping === null ? undefined : ids[shipping.orderIndex];
  let shippedAt = Number.POSITIVE_INFINITY;
  let due = shipping !== null && shippedId !== undefined && mayShipUnseen(shippedId, given);
  return {
    shipIfDue(at: number): void {
      if (!due || shipping === null || shippedId === undefined || shipping.at > at) return;
      due = false;
      if (statusAt(shippedId, shipping.at) !== "pending") return;
      shippedAt = shipping.at;
      timeline.get(shippedId)?.push({ at: shippedAt, status: "shipped" });
    },
    recordAt: (id: string, index: number, at: number) =>
      index * 2 + (id === shippedId && at >= shippedAt ? 1 : 0),
  };
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
