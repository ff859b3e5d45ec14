/**
 * Wing & Gong's search with Lowe's memoisation, as Porcupine runs it, over one order's operations: the
 * operations in one sequence consistent with real time that the model accepts, or, when there is none,
 * the longest such sequence of some of them, for a report that draws where every linearization fails.
 * It costs up to the square of the order's operations in memory (one linearized set per cache entry), so
 * it is for the short histories a report draws; `checkHistory` judges long ones without it. Records are
 * not searched: the model never changes one, so `checkHistory` compares them apart.
 */

import type { History, HistoryOperation } from "./history.ts";
import {
  cancelStatusDecides,
  type Observation,
  type OrderStatus,
  type RunChoices,
  startingStatuses,
  step,
} from "./spec-model.ts";

const STATUSES: readonly OrderStatus[] = ["pending", "shipped", "cancelled", "absent"];

/** A set of statuses as bits: the model made deterministic by following every branch at once. */
type StatusSet = number;

export interface OrderLinearization {
  /** Whether every operation of the order fits one sequence. */
  linearizable: boolean;
  /** The longest sequence found, as indices into `history.operations` (all of them when linearizable). */
  sequence: readonly number[];
}

interface Entry {
  operation: number;
  isCall: boolean;
  time: number;
  observation: Observation;
  match: Entry | undefined;
  previous: Entry | undefined;
  next: Entry | undefined;
}

/** One order under one combination of choices; lists may be read up to `allowStaleMs` before they began, as in `checkHistory`. */
export function searchOrder(
  history: History,
  orderId: string,
  choices: RunChoices,
  allowStaleMs = 0,
): OrderLinearization {
  const start = startingStatuses(orderId, history.given).reduce((set, status) => set | bit(status), 0);
  // An order the run was not given is never judged.
  if (start === 0) return { linearizable: true, sequence: [] };
  return search(entriesOf(history, orderId, allowStaleMs), start, choices);
}

function bit(status: OrderStatus): StatusSet {
  return 1 << STATUSES.indexOf(status);
}

function stepSet(set: StatusSet, observation: Observation, choices: RunChoices): StatusSet {
  let next = 0;
  for (const status of STATUSES) {
    if (!(set & bit(status))) continue;
    const after = step(status, observation, choices);
    if (after !== null) next |= bit(after);
    // A cancel that did not tell its effect may also have had none.
    if (observation.op === "cancel-undecided") next |= bit(status);
  }
  return next;
}

/** What one operation of the history tells of one order; undefined when it tells nothing. */
export function observationOf(operation: HistoryOperation, orderId: string): Observation | undefined {
  if (operation.op === "cancel") {
    if (operation.orderId !== orderId) return undefined;
    const decided = cancelStatusDecides(operation.status) && operation.answeredAt !== null;
    return decided ? { op: "cancel", status: operation.status as number } : { op: "cancel-undecided" };
  }
  if (operation.status !== 200 || operation.shown === null || operation.answeredAt === null) return undefined;
  return { op: "list", shown: operation.shown.has(orderId) };
}

/** Call and return entries in time order, a call before a return at the same instant; a list of them. */
function entriesOf(history: History, orderId: string, allowStaleMs: number): Entry {
  const entries: Entry[] = [];
  history.operations.forEach((operation, index) => {
    const observation = observationOf(operation, orderId);
    if (observation === undefined) return;
    const undecided = observation.op === "cancel-undecided";
    const end = undecided ? Number.POSITIVE_INFINITY : (operation.answeredAt as number);
    const begin = observation.op === "list" ? operation.sentAt - allowStaleMs : operation.sentAt;
    const call: Entry = {
      operation: index,
      isCall: true,
      time: begin,
      observation,
      match: undefined,
      previous: undefined,
      next: undefined,
    };
    const ret: Entry = { ...call, isCall: false, time: end, match: call };
    call.match = ret;
    entries.push(call, ret);
  });
  entries.sort((a, b) => a.time - b.time || Number(b.isCall) - Number(a.isCall));
  const head: Entry = {
    operation: -1,
    isCall: false,
    time: Number.NEGATIVE_INFINITY,
    observation: { op: "cancel-undecided" },
    match: undefined,
    previous: undefined,
    next: undefined,
  };
  let last = head;
  for (const entry of entries) {
    last.next = entry;
    entry.previous = last;
    last = entry;
  }
  return head;
}

/** Takes a call and its return out of the list. */
function lift(entry: Entry): void {
  unlink(entry);
  unlink(entry.match as Entry);
}

function unlink(entry: Entry): void {
  (entry.previous as Entry).next = entry.next;
  if (entry.next !== undefined) entry.next.previous = entry.previous;
}

/** Puts them back, in reverse. */
function unlift(entry: Entry): void {
  relink(entry.match as Entry);
  relink(entry);
}

function relink(entry: Entry): void {
  (entry.previous as Entry).next = entry;
  if (entry.next !== undefined) entry.next.previous = entry;
}

function search(head: Entry, start: StatusSet, choices: RunChoices): OrderLinearization {
  const seen = new Set<string>();
  const linearized = new Set<number>();
  const calls: Array<{ entry: Entry; state: StatusSet }> = [];
  let state = start;
  let longest: number[] = [];
  let entry = head.next;
  // The last entry is always a return (a call sorts before its own), so the walk ends by the list emptying.
  while (entry !== undefined) {
    if (entry.isCall) {
      const next = stepSet(state, entry.observation, choices);
      const key = `${[...linearized, entry.operation].sort((a, b) => a - b).join(",")}|${next}`;
      if (next !== 0 && !seen.has(key)) {
        seen.add(key);
        calls.push({ entry, state });
        linearized.add(entry.operation);
        if (calls.length > longest.length) longest = calls.map((call) => call.entry.operation);
        state = next;
        lift(entry);
        entry = head.next;
      } else entry = entry.next;
      continue;
    }
    // A return before its call was linearized: undo the last choice and try the next call after it.
    const undone = calls.pop();
    if (undone === undefined) return { linearizable: false, sequence: longest };
    state = undone.state;
    linearized.delete(undone.entry.operation);
    unlift(undone.entry);
    entry = undone.entry.next;
  }
  return { linearizable: true, sequence: calls.map((call) => call.entry.operation) };
}
