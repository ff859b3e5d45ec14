import type { BehaviourRule, OperationId } from "../../contract/types.ts";
import { type BehaviourState, noBehaviour } from "../core/behaviour.ts";
import type { JournalRecord } from "../core/journal.ts";
import type { OrdersPage, OrdersQuery } from "../core/order-page.ts";
import { orderKey, type SeedOrder, serializeRecord, withStatusJson } from "../core/order-record.ts";
import {
  type CancelOutcome,
  cancelTransition,
  ORDER_STATUSES,
  type OrderStatus,
} from "../core/order-status.ts";
import type { Seed } from "../core/seed.ts";
import type { SyncOrAsync } from "../core/sync-or-async.ts";
import type { Arrangement, BatchOutcome, World } from "../core/world.ts";
import type { Commands, RedisBackend } from "./redis-backend.ts";
import { type RedisListBody, readListBody } from "./redis-list.ts";
import { redisPage } from "./redis-page.ts";

// The spec's cancel rule as the CANCEL script reads it: one line per status, from order-status.ts.
const CANCEL_RULE = ORDER_STATUSES.map((status) => {
  const { outcome, next } = cancelTransition(status);
  return `${status} ${outcome} ${next}`;
});

const NO_ARRANGEMENT: Arrangement = { delayMs: 0 };

/** One world in Redis: every step a plain read or one atomic script, the list body kept until `v` moves. */
export class RedisWorld implements World {
  readonly #hash: string;
  readonly #journal: string;
  // Milliseconds a session's keys live after each use; 0 for the default world, which never expires.
  readonly #ttl: number;
  // What the world's records may hold at most (--max-memory), as memory mode bounds a world; -1: no bound.
  readonly #mostBytes: number;
  #seenVersion = "";
  #unrecorded: string[] = [];
  #pendingRead: Promise<(string | null)[]> | undefined;
  // A session's keys are renewed on use, at most this often per replica: its expiry stays within a tenth of the idle time.
  readonly #touchEveryMs: number;
  #touchedAt = 0;
  // The behaviour JSON last read and what it says, so an unchanged behaviour is not parsed again per request.
  #behaviourJson: string | null = null;
  #behaviourRead: BehaviourState = noBehaviour();
  #cachedVersion = "";
  #cachedSeed: Seed | undefined;
  #cachedBody: RedisListBody["body"] | undefined;
  // The list body being read, shared by the lists that ask meanwhile, and the bytes read for it so far.
  #pendingBody: Promise<RedisListBody> | undefined;
  #readingBytes = 0;

  constructor(
    private readonly state: RedisBackend,
    readonly session: string | null,
    /** When this replica last used it; Redis keeps the session's own expiry. */
    public lastUsed: number,
  ) {
    const id = session === null ? "default" : `s:${session}`;
    this.#hash = state.key(`w:${id}`);
    this.#journal = state.key(`j:${id}`);
    this.#ttl = session === null ? 0 : state.options.limits.idleMs;
    this.#mostBytes = state.options.limits.maxBytes ?? -1;
    this.#touchEveryMs = Math.min(1_000, this.#ttl / 10);
  }

  /**
   * What this world holds in this process beyond the shared seed, about: its own list body and what is read
   * for the next one, counted against --max-memory as a memory-mode session is (sessions.ts), so the least
   * recently used are let go.
   */
  get heldBytes(): number {
    const body = this.#cachedBody;
    const own = body === undefined || body instanceof Uint8Array ? 0 : body.ownBytes;
    return own + this.#readingBytes;
  }

  forgetCache(): void {
    this.#cachedBody = undefined;
    this.#seenVersion = "";
    this.#touchedAt = 0;
  }

  /** One plain read of the world's version and behaviour; a script runs only when a rule is there to take. */
  arrange(operation: OperationId | undefined): Promise<Arrangement> {
    return this.#read().then((fields) => this.#arranged(operation, fields));
  }

  /**
   * The world's version and behaviour, read once for every request of this event-loop turn: one command
   * and one socket write where each request would have made its own. Every request sharing the read
   * arrived before it is sent, so it still sees every change made before it arrived, on any replica.
   */
  #read(): Promise<(string | null)[]> {
    if (this.#pendingRead) return this.#pendingRead;
    const read = new Promise<(string | null)[]>((resolve, reject) => {
      setImmediate(() => {
        this.#pendingRead = undefined;
        this.state.client.hmget(this.#hash, "v", "b").then(resolve, reject);
      });
    });
    this.#pendingRead = read;
    return read;
  }

  #arranged(
    operation: OperationId | undefined,
    [version, json]: (string | null)[],
  ): SyncOrAsync<Arrangement> {
    this.#seenVersion = version ?? "0";
    if (json === null || json === undefined) return NO_ARRANGEMENT;
    if (json !== this.#behaviourJson) {
      this.#behaviourRead = readBehaviour(json);
      this.#behaviourJson = json;
    }
    const { delayMs, rules } = this.#behaviourRead;
    if (operation === undefined || !rules.some((rule) => rule.operation === operation)) return { delayMs };
    return this.state.commands.petstoreTakeRule(this.#hash, operation, this.#ttl).then((taken) => {
      const [delay, rule] = taken as [number, string];
      return rule === ""
        ? { delayMs: delay }
        : { delayMs: delay, rule: inControlOrder(JSON.parse(rule) as BehaviourRule) };
    });
  }

  /**
   * A session's use, by an API or a control request: sent before the request's own reads in the same
   * pipeline, never waited for on its own.
   */
  touch(): void {
    const now = Date.now();
    if (now - this.#touchedAt < this.#touchEveryMs) return;
    this.#touchedAt = now;
    const { state } = this;
    const { limits, prefix } = state.options;
    state.commands
      .petstoreTouch(
        this.#hash,
        state.key("sessions"),
        this.#journal,
        state.key("session-names"),
        this.session as string,
        now,
        this.#ttl,
        limits.maxSessions,
        prefix,
      )
      // The read sent right after it fails too, and answers 503; a renewal that missed is sent again next use.
      .catch(() => {
        this.#touchedAt = 0;
      });
  }

  listBody(): RedisListBody["body"] | Promise<RedisListBody["body"]> {
    const { seed } = this.state;
    if (this.#cachedBody && this.#cachedVersion === this.#seenVersion && this.#cachedSeed === seed) {
      return this.#cachedBody;
    }
    return this.#bodyAtLeast(seed, this.#seenVersion);
  }

  /**
   * The list body of a version no older than `seen`, the one this request's own read of the world found: a
   * read already under way is shared, but one begun before a change this request must show (another
   * replica's cancel, answered before it arrived) is followed by a read of its own.
   */
  async #bodyAtLeast(seed: Seed, seen: string): Promise<RedisListBody["body"]> {
    this.#pendingBody ??= this.#readBody(seed);
    const shared = await this.#pendingBody;
    if (!olderVersion(shared.version, seen)) return shared.body;
    // Begun after the shared one ended, so after this request arrived: it shows all that came before it
    // (a reset may since have taken the world back to no version at all).
    this.#pendingBody ??= this.#readBody(seed);
    return (await this.#pendingBody).body;
  }

  async #readBody(seed: Seed): Promise<RedisListBody> {
    const counted = (bytes: number) => {
      this.#readingBytes += bytes;
    };
    try {
      const read = await readListBody(this.state.client, this.#hash, seed, counted);
      this.#cachedBody = read.body;
      this.#cachedVersion = read.version;
      this.#cachedSeed = seed;
      if (olderVersion(this.#seenVersion, read.version)) this.#seenVersion = read.version;
      return read;
    } finally {
      this.#readingBytes = 0;
      this.#pendingBody = undefined;
    }
  }

  async cancel(id: bigint): Promise<CancelOutcome> {
    // An id the fixtures do not have exists only if this world added it: one plain read says so.
    if (this.state.seed.placeOf(orderKey(id)) === undefined) {
      const added = await this.state.client.hexists(this.#hash, `a:${orderKey(id)}`);
      if (added === 0) return "not_found";
    }
    return (await this.#run("petstoreCancel", id, [], ...CANCEL_RULE)) as CancelOutcome;
  }

  page(query: OrdersQuery): Promise<OrdersPage | undefined> {
    return redisPage(this.state.client, this.#hash, this.state.seed, query);
  }

  async controlOrderJson(id: bigint): Promise<string | undefined> {
    const key = orderKey(id);
    const [added, removed, status, json] = await this.state.client.hmget(
      this.#hash,
      `a:${key}`,
      `x:${key}`,
      `s:${key}`,
      `r:${key}`,
    );
    const { seed } = this.state;
    const place = seed.placeOf(key);
    const seedOrder =
      added === null && removed === null && place !== undefined ? seed.orderAt(place, key) : undefined;
    if (added === null && seedOrder === undefined) return undefined;
    return withStatusJson({
      key,
      json: json ?? seedOrder?.json ?? "{}",
      status: (status ?? seedOrder?.status ?? "pending") as OrderStatus,
    });
  }

  async setStatus(id: bigint, status: OrderStatus): Promise<boolean> {
    return (await this.#run("petstoreSetStatus", id, [], status)) === 1;
  }

  async putOrder(order: SeedOrder): Promise<"created" | "replaced" | "full"> {
    const json = serializeRecord(order.record);
    return (await this.#run(
      "petstorePutOrder",
      order.record.id,
      [this.state.key("clock")],
      order.status,
      json,
      this.#mostBytes,
    )) as "created" | "replaced" | "full";
  }

  async applyBatch(create: readonly SeedOrder[], remove: readonly bigint[]): Promise<BatchOutcome> {
    const { state } = this;
    const seedStatus = (key: string) => {
      const place = state.seed.placeOf(key);
      return place === undefined ? "" : state.seed.orderAt(place).status;
    };
    const args: (string | number)[] = [this.#ttl, this.#mostBytes, create.length];
    for (const { record, status } of create) {
      const key = orderKey(record.id as bigint);
      args.push(key, seedStatus(key), status, serializeRecord(record));
    }
    for (const id of remove) args.push(orderKey(id), seedStatus(orderKey(id)));
    const answer = (await state.commands.petstoreBatch(this.#hash, state.key("clock"), ...args)) as unknown[];
    if (answer[0] === "full") return "full";
    const created = Number(answer[1]);
    return {
      created: answer.slice(2, 2 + created).map(String),
      removed: answer.slice(2 + created).map(String),
    };
  }

  async removeOrder(id: bigint): Promise<boolean> {
    return (await this.#run("petstoreRemoveOrder", id, [this.state.key("clock")])) === 1;
  }

  async reset(): Promise<void> {
    const { state } = this;
    await state.commands.petstoreReset(this.#hash, state.key("clock"), this.#ttl);
  }

  async behaviour(): Promise<BehaviourState> {
    const json = await this.state.client.hget(this.#hash, "b");
    return json === null ? noBehaviour() : readBehaviour(json);
  }

  async setBehaviour(behaviour: BehaviourState): Promise<void> {
    const empty = behaviour.delayMs === 0 && behaviour.rules.length === 0;
    const { state } = this;
    await state.commands.petstoreSetBehaviour(this.#hash, this.#ttl, empty ? "" : JSON.stringify(behaviour));
  }

  /** Entries of this event-loop turn go to Redis together, in one script run after the turn's answers. */
  record(entry: JournalRecord): void {
    if (this.state.options.journalSize === 0) return;
    if (this.#unrecorded.length === 0) setImmediate(this.#flushJournal);
    this.#unrecorded.push(JSON.stringify(entry));
  }

  readonly #flushJournal = () => {
    const entries = this.#unrecorded;
    this.#unrecorded = [];
    const { state } = this;
    // The answers are already decided; entries Redis did not take are lost, never a failed request.
    state.commands
      .petstoreRecord(this.#journal, this.#ttl, state.options.journalSize, ...entries)
      .catch(() => {});
  };

  async journal(): Promise<JournalRecord[]> {
    const entries = await this.state.client.lrange(this.#journal, 0, -1);
    return entries.reverse().map((entry) => JSON.parse(entry) as JournalRecord);
  }

  async clearJournal(): Promise<void> {
    await this.state.client.del(this.#journal);
  }

  /** Runs an order script: KEYS are the world's hash and `keys`; ARGV starts with the order's key, seed status and ttl. */
  #run(name: keyof Commands, id: bigint, keys: string[], ...rest: (string | number)[]): Promise<unknown> {
    const { state } = this;
    const key = orderKey(id);
    const place = state.seed.placeOf(key);
    const seedStatus = place === undefined ? "" : state.seed.orderAt(place).status;
    return state.commands[name](this.#hash, ...keys, key, seedStatus, this.#ttl, ...rest);
  }
}

function readBehaviour(json: string): BehaviourState {
  const parsed = JSON.parse(json) as { delayMs?: number; rules?: unknown[] };
  return {
    delayMs: parsed.delayMs ?? 0,
    // Lua's JSON writer keeps no key order: each rule is put back in the order the control API uses.
    rules: Array.isArray(parsed.rules)
      ? parsed.rules.map((rule) => inControlOrder(rule as BehaviourRule))
      : [],
  };
}

function inControlOrder(rule: BehaviourRule): BehaviourRule {
  return {
    operation: rule.operation,
    ...(rule.status !== undefined ? { status: rule.status } : {}),
    ...(rule.fault !== undefined ? { fault: rule.fault } : {}),
    ...(rule.times !== undefined ? { times: rule.times } : {}),
  };
}

/** Whether world version `a` (a counter's value, as Redis gives it) comes before `b`. */
function olderVersion(a: string, b: string): boolean {
  if (a === b) return false;
  if (a === "" || b === "") return a === "";
  return a.length !== b.length ? a.length < b.length : a < b;
}
