import type { BehaviourRule, OperationId } from "../../contract/types.ts";
import type { BehaviourState } from "./behaviour.ts";
import type { PiecedBody } from "./exchange.ts";
import type { JournalRecord } from "./journal.ts";
import type { OrdersPage, OrdersQuery } from "./order-page.ts";
import type { SeedOrder } from "./order-record.ts";
import type { CancelOutcome, OrderStatus } from "./order-status.ts";
import type { Seed } from "./seed.ts";
import type { SyncOrAsync } from "./sync-or-async.ts";

/** What an API request's world arranged for it: a forced answer taken from the rules, and the delay. */
export interface Arrangement {
  readonly rule?: BehaviourRule;
  readonly delayMs: number;
}

/**
 * Everything one client sees and arranges: orders, behaviour rules and the request journal, as the state
 * store keeps them. Each method is one step a rule needs, so a shared store can make it one atomic
 * operation (a cancel is exactly-once, a rule's last use is taken once, across processes).
 */
export interface World {
  /** The session's name; null for the shared default world. */
  readonly session: string | null;
  /** The delay, and with `operation` the first rule left for it with one use taken. */
  arrange(operation: OperationId | undefined): SyncOrAsync<Arrangement>;
  /** The listOrders body: every order in list order, as a JSON array of Order records. */
  listBody(): SyncOrAsync<Uint8Array | PiecedBody>;
  /** The spec's cancel rule (order-status.ts), applied once. */
  cancel(id: bigint): SyncOrAsync<CancelOutcome>;
  /**
   * A page of orders with their statuses (server/core/order-page.ts), costing what the page does whatever
   * the world's size; undefined when the query's `after` is an id this world's list never held.
   */
  page(query: OrdersQuery): SyncOrAsync<OrdersPage | undefined>;
  /** One order with its status as control JSON, or undefined when there is no such order. */
  controlOrderJson(id: bigint): SyncOrAsync<string | undefined>;
  setStatus(id: bigint, status: OrderStatus): SyncOrAsync<boolean>;
  /**
   * Replaces the order with this id in place, or appends it; "full" (nothing done) when the world holds as
   * much as it may (--max-memory) and this would make it hold more.
   */
  putOrder(order: SeedOrder): SyncOrAsync<"created" | "replaced" | "full">;
  removeOrder(id: bigint): SyncOrAsync<boolean>;
  /**
   * A control batch as one step: the orders of `create` made where no order has their id (the first of an
   * id given twice; one that has it is left as it is), then the ids of `remove` removed. All or nothing:
   * "full", nothing done, when the orders to create would not all fit (--max-memory).
   */
  applyBatch(create: readonly SeedOrder[], remove: readonly bigint[]): SyncOrAsync<BatchOutcome>;
  /** Back to the fixtures as loaded now, rules cleared; the journal stays, since it records what happened. */
  reset(): SyncOrAsync<void>;
  behaviour(): SyncOrAsync<BehaviourState>;
  setBehaviour(behaviour: BehaviourState): SyncOrAsync<void>;
  /** Adds to the journal; never waited for, so a journal write never holds an answer back. */
  record(entry: JournalRecord): void;
  journal(): SyncOrAsync<JournalRecord[]>;
  clearJournal(): SyncOrAsync<void>;
}

/** What a control batch did: the ids (their digits) it created and removed; "full" when it did nothing. */
export type BatchOutcome = { created: string[]; removed: string[] } | "full";

/** A live session as the control API lists it. */
export interface SessionSummary {
  name: string;
  orders: number;
  changes: number;
  lastUsed: number;
}

/** Sessions on one control page at most, and by default. */
export const MAX_PAGE_SESSIONS = 1_000;

/** Which live sessions a control page asks for: in name order, those after the name `after`. */
export interface SessionsQuery {
  after?: string;
  limit: number;
}

/** One page of live sessions, in name order. */
export interface SessionsPage {
  sessions: SessionSummary[];
  /** The name to ask for the next page after; absent when no live session follows. */
  next?: string;
  /** Live sessions in all. */
  total: number;
}

export interface SessionLimits {
  /** Past this many, the least recently used session is evicted. */
  maxSessions: number;
  /** A session unused for this long is evicted. */
  idleMs: number;
  /**
   * What all sessions in this process's memory may hold together beyond the shared seed (--max-memory):
   * past it the least recently used sessions are evicted. Unbounded when absent.
   */
  maxBytes?: number;
}

/**
 * Where worlds live: in this process's memory (the default), or in a store several processes share. The
 * seed is always this process's own fixtures; a store keeps only what worlds changed beside it.
 */
export interface StateStore {
  /** Names the store for the start-up line, without credentials. */
  readonly description: string;
  readonly defaultWorld: World;
  /** The session's world, created on first use; using it keeps it alive. */
  session(name: string, now: number): SyncOrAsync<World>;
  /** A page of live sessions in name order, costing what the page does however many sessions live. */
  sessions(now: number, query: SessionsQuery): SyncOrAsync<SessionsPage>;
  /** New fixtures: the default world moves to them, sessions keep theirs, new sessions start from them. */
  reload(seed: Seed): SyncOrAsync<void>;
  /** Whether the store can serve requests now. */
  healthy(): SyncOrAsync<boolean>;
  /** Whether an error a step failed with means the store cannot be reached (answered 503, retried later). */
  unreachable(error: unknown): boolean;
  close(): Promise<void>;
}
