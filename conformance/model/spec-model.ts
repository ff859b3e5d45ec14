/**
 * The spec's API as a sequential model of one order (§3, §4): what each answer says about the order's
 * status, and what it leaves it as. The linearizability checker, its brute-force twin in the tests and the
 * state rules read this one model.
 */

import type { GivenOrders } from "./history.ts";

/**
 * An order's status as the model sees it. `shipped` stands for every status that is not pending and was
 * not reached by a cancel of this run (§3 names `shipped`; the complete set is not given); `cancelled`
 * is the status a 204 leaves (its name: not shown); `absent` is an order the service does not have.
 */
export type OrderStatus = "pending" | "shipped" | "cancelled" | "absent";

/**
 * What the spec leaves open, decided once per run by what the deployment shows and the same for every
 * order of the run: whether a cancelled order stays in the list, and what a cancelled order's next
 * cancel answers (409, as not pending, or 404, as gone).
 */
export interface RunChoices {
  cancelledOrdersListed: boolean;
  secondCancelStatus: 404 | 409;
}

/** Every combination of the run's open choices; a run passes when one of them explains every order. */
export const ALL_RUN_CHOICES: readonly RunChoices[] = [
  { cancelledOrdersListed: true, secondCancelStatus: 409 },
  { cancelledOrdersListed: true, secondCancelStatus: 404 },
  { cancelledOrdersListed: false, secondCancelStatus: 409 },
  { cancelledOrdersListed: false, secondCancelStatus: 404 },
];

/** What one operation, projected onto one order, saw of it. */
export type Observation =
  /** A cancel answered with this status (decided: see `cancelStatusDecides`). */
  | { op: "cancel"; status: number }
  /** A cancel with no answer, or an answer that says nothing of its effect: it may or may not take effect. */
  | { op: "cancel-undecided" }
  /** A list read whole: whether it showed the order. */
  | { op: "list"; shown: boolean };

/** Statuses of a cancel whose effect the model knows; any other (a 5xx, a 429, none) may or may not have taken effect. */
const DECIDING_CANCEL_STATUSES: ReadonlySet<number> = new Set([204, 401, 404, 409]);

export function cancelStatusDecides(status: number | null): status is number {
  return status !== null && DECIDING_CANCEL_STATUSES.has(status);
}

/** What a cancel of an order in this status answers (§3, §4.2; a refused key is apart: 401 changes nothing). */
export function cancelAnswer(status: OrderStatus, choices: RunChoices): number {
  if (status === "pending") return 204;
  if (status === "shipped") return 409;
  if (status === "cancelled") return choices.secondCancelStatus;
  return 404;
}

/** Whether a list shows an order in this status (§4.1: every order placed in the store). */
export function listShows(status: OrderStatus, choices: RunChoices): boolean {
  if (status === "cancelled") return choices.cancelledOrdersListed;
  return status !== "absent";
}

/**
 * One step of the model: the order's status after the operation, or null when the model cannot give that
 * observation from that status. An undecided cancel takes effect here; not taking effect is the caller's
 * other branch (it changes nothing).
 */
export function step(status: OrderStatus, observation: Observation, choices: RunChoices): OrderStatus | null {
  if (observation.op === "list") return listShows(status, choices) === observation.shown ? status : null;
  const next = status === "pending" ? "cancelled" : status;
  if (observation.op === "cancel-undecided") return next;
  if (observation.status === 401) return status;
  return cancelAnswer(status, choices) === observation.status ? next : null;
}

/**
 * The statuses an order may start a run in, from what the run was given; empty for an id the run was not
 * given, which is never judged. An order given without its status may be pending or not pending.
 */
export function startingStatuses(orderId: string, given: GivenOrders): readonly OrderStatus[] {
  if (given.pending.includes(orderId)) return ["pending"];
  if (given.shipped.includes(orderId)) return ["shipped"];
  if (given.missing.includes(orderId)) return ["absent"];
  if (given.unknown.includes(orderId)) return ["pending", "shipped", "cancelled"];
  return [];
}

/**
 * Whether the order may be shipped outside the API while the run watches it (§3 rule 2: how an order
 * becomes shipped is not shown), which may set its record's `complete` and `shipDate` (§2): an order whose
 * status the run was not told. One given as pending stays so until the run cancels it.
 */
export function mayShipUnseen(orderId: string, given: GivenOrders): boolean {
  const starts = startingStatuses(orderId, given);
  return starts.length > 1 && starts.includes("pending");
}

/**
 * That shipping, which no operation of the run shows: a pending order becomes shipped, and its record may
 * change then, once; from any other status it cannot happen (null). Only a 409 after it shows it happened,
 * so a record change is read as a shipping only in a history with a 409 of the order.
 */
export function shipUnseen(status: OrderStatus): OrderStatus | null {
  return status === "pending" ? "shipped" : null;
}
