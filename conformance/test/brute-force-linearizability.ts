/**
 * The checker's independent twin, for small histories only: for each combination of the run's choices,
 * each order's operations are tried in every sequence consistent with real time (an operation answered
 * before another was sent comes first), each operation stepped through the spec's model, a cancel that
 * did not tell its effect both with and without it, and for an order the run was not told the status of,
 * in a history with a 409 of it, a shipping outside the API at any moment or never, after which its record
 * may differ. Nothing of the checker's reasoning is shared.
 */

import type { History } from "../model/history.ts";
import {
  ALL_RUN_CHOICES,
  cancelStatusDecides,
  mayShipUnseen,
  type Observation,
  type OrderStatus,
  type RunChoices,
  shipUnseen,
  startingStatuses,
  step,
} from "../model/spec-model.ts";

interface Placed {
  start: number;
  end: number;
  /** `ship`: the shipping outside the API, which no operation shows. */
  observation: Observation | { op: "ship" };
  /** For a list that showed the order: its record's text. */
  record: string | undefined;
  mayBeSkipped: boolean;
}

/**
 * Whether some choice (of `possible`, all by default) explains every order the run was given, lists being
 * allowed to be `staleMs` old.
 */
export function explainedByBruteForce(
  history: History,
  staleMs: number,
  possible: readonly RunChoices[] = ALL_RUN_CHOICES,
): boolean {
  const { given } = history;
  const orderIds = [...new Set([...given.pending, ...given.shipped, ...given.missing, ...given.unknown])];
  return possible.some((choices) =>
    orderIds.every((orderId) => orderExplainedByBruteForce(history, orderId, choices, staleMs)),
  );
}

/** Whether one order's operations fit one sequence under these choices; records compared unless told not to. */
export function orderExplainedByBruteForce(
  history: History,
  orderId: string,
  choices: RunChoices,
  staleMs: number,
  judgeRecords = true,
): boolean {
  const placed = project(history, orderId, staleMs).map((one) =>
    judgeRecords ? one : { ...one, record: undefined },
  );
  const conflicted = placed.some(
    ({ observation }) => observation.op === "cancel" && observation.status === 409,
  );
  if (conflicted && mayShipUnseen(orderId, history.given))
    placed.push({
      start: Number.NEGATIVE_INFINITY,
      end: Number.POSITIVE_INFINITY,
      observation: { op: "ship" },
      record: undefined,
      mayBeSkipped: true,
    });
  return startingStatuses(orderId, history.given).some((start) =>
    search(placed, 0, start, undefined, choices),
  );
}

function project(history: History, orderId: string, staleMs: number): Placed[] {
  const placed: Placed[] = [];
  for (const operation of history.operations) {
    const end = operation.answeredAt ?? Number.POSITIVE_INFINITY;
    if (operation.op === "cancel") {
      if (operation.orderId !== orderId) continue;
      const decided = cancelStatusDecides(operation.status) && operation.answeredAt !== null;
      placed.push({
        start: operation.sentAt,
        end: decided ? end : Number.POSITIVE_INFINITY,
        observation: decided
          ? { op: "cancel", status: operation.status as number }
          : { op: "cancel-undecided" },
        record: undefined,
        mayBeSkipped: !decided,
      });
    } else if (operation.status === 200 && operation.shown !== null && operation.answeredAt !== null) {
      const record = operation.shown.get(orderId);
      placed.push({
        start: operation.sentAt - staleMs,
        end,
        observation: { op: "list", shown: record !== undefined },
        record: record === undefined ? undefined : history.records[record],
        mayBeSkipped: false,
      });
    }
  }
  return placed;
}

/** Depth first over every next operation that no unplaced one must precede. `done` is a bit set. */
function search(
  placed: readonly Placed[],
  done: number,
  status: OrderStatus,
  record: string | undefined,
  choices: RunChoices,
): boolean {
  if (done === (1 << placed.length) - 1) return true;
  return placed.some((candidate, index) => {
    if (done & (1 << index)) return false;
    const mustWait = placed.some(
      (other, j) => j !== index && !(done & (1 << j)) && other.end < candidate.start,
    );
    if (mustWait) return false;
    const without = done | (1 << index);
    if (candidate.mayBeSkipped && search(placed, without, status, record, choices)) return true;
    if (candidate.observation.op === "ship") {
      const shipped = shipUnseen(status);
      return shipped !== null && search(placed, without, shipped, undefined, choices);
    }
    const next = step(status, candidate.observation, choices);
    if (next === null) return false;
    if (candidate.record !== undefined && record !== undefined && candidate.record !== record) return false;
    return search(placed, without, next, candidate.record ?? record, choices);
  });
}
