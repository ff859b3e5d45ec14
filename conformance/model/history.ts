/**
 * A concurrent history as clients saw it: what explore records, what the proxy observes, and what the
 * linearizability checker reads. Times are milliseconds from the run's start, from one monotonic clock.
 */

/** Where an operation's effect may lie: after it was sent and, when an answer came, before it was complete. */
interface OperationBase {
  /** The client (lane) that issued it, from 0. */
  client: number;
  /** When its request began to be sent. */
  sentAt: number;
  /**
   * When its answer was complete; null when none came (a timeout, a reset): such an operation may or may
   * not have taken effect, at any moment after `sentAt`.
   */
  answeredAt: number | null;
  /** The answer's HTTP status; null when no answer came. */
  status: number | null;
}

/** DELETE /store/orders/{orderId}. */
export interface CancelOperation extends OperationBase {
  op: "cancel";
  /** The order's id, a string of digits so that int64 ids stay exact. */
  orderId: string;
}

/** GET /store/orders. */
export interface ListOperation extends OperationBase {
  op: "list";
  /**
   * For a 200 read whole: each of the run's orders the list showed, by id, with its record's index in
   * `History.records`. Orders the run was not given are never kept. Null when the list was not read whole.
   */
  shown: ReadonlyMap<string, number> | null;
}

export type HistoryOperation = CancelOperation | ListOperation;

/** What a run knew of its orders before it began; an id in none of these is never judged. */
export interface GivenOrders {
  /** Orders given as pending (the run may cancel each). */
  pending: readonly string[];
  /** Orders given as not pending (shipped). */
  shipped: readonly string[];
  /** Ids given, or shown, as absent. */
  missing: readonly string[];
  /** Orders whose starting status was not told (a provisioning hook that gave ids only). */
  unknown: readonly string[];
}

export interface History {
  given: GivenOrders;
  /** Exact record texts (canonical JSON), interned: a list's `shown` points into this table. */
  records: readonly string[];
  operations: readonly HistoryOperation[];
}
