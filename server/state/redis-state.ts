import { Redis, ReplyError } from "ioredis";
import type { BehaviourRule, OperationId } from "../../contract/types.ts";
import { type BehaviourState, noBehaviour } from "../core/behaviour.ts";
import type { JournalRecord } from "../core/journal.ts";
import {
  orderKey,
  type SeedOrder,
  type StoredOrder,
  serializeRecord,
  withStatusJson,
} from "../core/order-record.ts";
import {
  type CancelOutcome,
  cancelTransition,
  ORDER_STATUSES,
  type OrderStatus,
} from "../core/order-status.ts";
import { encodeList, type Seed } from "../core/seed.ts";
import {
  type Arrangement,
  type SessionLimits,
  type SessionSummary,
  type StateStore,
  StoreUnavailableError,
  type World,
} from "../core/world.ts";
import * as scripts from "./redis-scripts.ts";
import type { StoreAddress } from "./store-url.ts";

export interface RedisStateOptions {
  address: StoreAddress;
  prefix: string;
  seed: Seed;
  limits: SessionLimits;
  journalSize: number;
  /** Told when the store is lost and when it is back, with the address as it may be shown. */
  onConnectionChange?: (up: boolean, detail: string) => void;
  /** How long start-up waits for Redis before giving up (default 5 s). */
  connectTimeoutMs?: number;
}

// The spec's cancel rule as the CANCEL script reads it: one line per status, from order-status.ts.
const CANCEL_RULE = ORDER_STATUSES.map((status) => {
  const { outcome, next } = cancelTransition(status);
  return `${status} ${outcome} ${next}`;
});

// Errors Redis sends while it cannot serve yet (loading its data, a failover): as unreachable as a closed port.
const NOT_SERVING = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN)\b/;

type Script = (...args: (string | number)[]) => Promise<unknown>;
/** The scripts as ioredis defines them on the client, by name. */
interface Commands {
  petstoreArrange: Script;
  petstoreCancel: Script;
  petstoreSetStatus: Script;
  petstorePutOrder: Script;
  petstoreRemoveOrder: Script;
  petstoreReset: Script;
  petstoreSetBehaviour: Script;
  petstoreRecord: Script;
}

/**
 * Worlds in Redis, shared by every mock process on the same store and prefix. Each step is one script run
 * atomically in Redis (redis-scripts.ts). The fixtures stay in each process: Redis holds what changed.
 */
export class RedisState implements StateStore {
  readonly description: string;
  readonly defaultWorld: RedisWorld;
  readonly client: Redis;
  #seed: Seed;
  // Session world objects hold a cached list body; the least recently used go past the session limit.
  readonly #worlds = new Map<string, RedisWorld>();

  private constructor(readonly options: RedisStateOptions) {
    this.description = `redis ${options.address.shown} (prefix "${options.prefix}")`;
    this.#seed = options.seed;
    this.client = new Redis(options.address.url, {
      lazyConnect: true,
      // A request while Redis is away is answered 503 at once rather than queued for later.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      enableAutoPipelining: true,
      commandTimeout: 2_000,
      connectTimeout: options.connectTimeoutMs ?? 5_000,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    });
    const script = (name: keyof Commands, lua: string, numberOfKeys: number) =>
      this.client.defineCommand(name, { lua, numberOfKeys });
    script("petstoreArrange", scripts.ARRANGE, 3);
    script("petstoreCancel", scripts.CANCEL, 1);
    script("petstoreSetStatus", scripts.SET_STATUS, 1);
    script("petstorePutOrder", scripts.PUT_ORDER, 2);
    script("petstoreRemoveOrder", scripts.REMOVE_ORDER, 2);
    script("petstoreReset", scripts.RESET, 2);
    script("petstoreSetBehaviour", scripts.SET_BEHAVIOUR, 1);
    script("petstoreRecord", scripts.RECORD, 1);
    this.defaultWorld = new RedisWorld(this, null);
  }

  /** Connects, or rejects with a one-line reason naming the address (never its credentials). */
  static async connect(options: RedisStateOptions): Promise<RedisState> {
    const state = new RedisState(options);
    const failures: string[] = [];
    const onError = (error: Error) => failures.push(describe(error));
    state.client.on("error", onError);
    try {
      await state.client.connect();
      await state.client.ping();
    } catch (error) {
      state.client.disconnect();
      throw new Error(
        `cannot reach the state store at ${options.address.shown}: ${failures[0] ?? describe(error as Error)}`,
      );
    } finally {
      state.client.off("error", onError);
    }
    state.#watchConnection();
    return state;
  }

  get commands(): Commands {
    return this.client as unknown as Commands;
  }
  get seed(): Seed {
    return this.#seed;
  }
  key(name: string): string {
    return `${this.options.prefix}${name}`;
  }

  session(name: string, _now: number): RedisWorld {
    let world = this.#worlds.get(name);
    if (world) this.#worlds.delete(name);
    else {
      world = new RedisWorld(this, name);
      if (this.#worlds.size >= this.options.limits.maxSessions) {
        const oldest = this.#worlds.keys().next();
        if (!oldest.done) this.#worlds.delete(oldest.value);
      }
    }
    this.#worlds.set(name, world);
    return world;
  }

  async sessions(now: number): Promise<SessionSummary[]> {
    const index = this.key("sessions");
    const since = now - this.options.limits.idleMs;
    const listed = await this.guard(this.client.zrangebyscore(index, since, "+inf", "WITHSCORES"));
    const summaries: SessionSummary[] = [];
    for (let i = 0; i < listed.length; i += 2) {
      const name = listed[i] as string;
      const fields = await this.guard(this.client.hgetall(this.key(`w:s:${name}`)));
      const overlay = readOverlay(fields);
      summaries.push({
        name,
        orders: [...overlay.listed(this.#seed)].length,
        changes: overlay.changes,
        lastUsed: Number(listed[i + 1]),
      });
    }
    return summaries;
  }

  reload(seed: Seed): void {
    this.#seed = seed;
    this.defaultWorld.forgetCache();
    for (const world of this.#worlds.values()) world.forgetCache();
  }

  healthy(): boolean {
    return this.client.status === "ready";
  }

  async close(): Promise<void> {
    this.client.removeAllListeners("error");
    await this.client.quit().catch(() => this.client.disconnect());
  }

  /** A store call whose failure to reach Redis becomes StoreUnavailableError (answered 503). */
  guard<T>(call: Promise<T>): Promise<T> {
    return call.catch((error: Error) => {
      if (error instanceof ReplyError && !NOT_SERVING.test(error.message)) throw error;
      throw new StoreUnavailableError(`${this.options.address.shown}: ${describe(error)}`);
    });
  }

  #watchConnection(): void {
    let up = true;
    const change = (now: boolean, detail: string) => {
      if (now === up) return;
      up = now;
      // Redis may have lost its data while away: cached list bodies could name versions it reuses.
      this.defaultWorld.forgetCache();
      for (const world of this.#worlds.values()) world.forgetCache();
      this.options.onConnectionChange?.(now, detail);
    };
    this.client.on("error", (error: Error) => change(false, describe(error)));
    this.client.on("close", () => change(false, "connection closed"));
    this.client.on("ready", () => change(true, "connected"));
  }
}

/** An ioredis error as one line; its messages carry host and port, never the URL's credentials. */
function describe(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${code} ${error.message}` : error.message;
}

class RedisWorld implements World {
  readonly #hash: string;
  readonly #journal: string;
  // Milliseconds a session's keys live after each use; 0 for the default world, which never expires.
  readonly #ttl: number;
  #seenVersion = "";
  #cachedVersion = "";
  #cachedSeed: Seed | undefined;
  #cachedBody: Uint8Array | undefined;

  constructor(
    private readonly state: RedisState,
    readonly session: string | null,
  ) {
    const id = session === null ? "default" : `s:${session}`;
    this.#hash = state.key(`w:${id}`);
    this.#journal = state.key(`j:${id}`);
    this.#ttl = session === null ? 0 : state.options.limits.idleMs;
  }

  forgetCache(): void {
    this.#cachedBody = undefined;
    this.#seenVersion = "";
  }

  async arrange(operation: OperationId | undefined): Promise<Arrangement> {
    const { state } = this;
    const [version, delayMs, rule] = (await state.guard(
      state.commands.petstoreArrange(
        this.#hash,
        state.key("sessions"),
        this.#journal,
        operation ?? "",
        this.#ttl,
        this.session ?? "",
        Date.now(),
        state.options.limits.maxSessions,
        state.options.prefix,
      ),
    )) as [string, number, string];
    this.#seenVersion = version;
    return rule === "" ? { delayMs } : { delayMs, rule: readRule(rule) };
  }

  listBody(): Uint8Array | Promise<Uint8Array> {
    const { seed } = this.state;
    if (this.#cachedBody && this.#cachedVersion === this.#seenVersion && this.#cachedSeed === seed) {
      return this.#cachedBody;
    }
    return this.#overlay().then((overlay) => {
      const body = overlay.changes === 0 ? seed.listBody : encodeList(overlay.listed(seed));
      this.#cachedBody = body;
      this.#cachedVersion = overlay.version;
      this.#cachedSeed = seed;
      this.#seenVersion = overlay.version;
      return body;
    });
  }

  async cancel(id: bigint): Promise<CancelOutcome> {
    return (await this.#run("petstoreCancel", id, [], ...CANCEL_RULE)) as CancelOutcome;
  }

  async controlListJson(): Promise<string> {
    const overlay = await this.#overlay();
    let json = "";
    for (const order of overlay.listed(this.state.seed)) {
      json += `${json === "" ? "[" : ","}${withStatusJson(order)}`;
    }
    return json === "" ? "[]" : `${json}]`;
  }

  async controlOrderJson(id: bigint): Promise<string | undefined> {
    const key = orderKey(id);
    const overlay = await this.#overlay();
    for (const order of overlay.listed(this.state.seed)) if (order.key === key) return withStatusJson(order);
    return undefined;
  }

  async setStatus(id: bigint, status: OrderStatus): Promise<boolean> {
    return (await this.#run("petstoreSetStatus", id, [], status)) === 1;
  }

  async putOrder(order: SeedOrder): Promise<"created" | "replaced"> {
    const json = serializeRecord(order.record);
    return (await this.#run(
      "petstorePutOrder",
      order.record.id,
      [this.state.key("clock")],
      order.status,
      json,
    )) as "created" | "replaced";
  }

  async removeOrder(id: bigint): Promise<boolean> {
    return (await this.#run("petstoreRemoveOrder", id, [this.state.key("clock")])) === 1;
  }

  async reset(): Promise<void> {
    const { state } = this;
    await state.guard(state.commands.petstoreReset(this.#hash, state.key("clock"), this.#ttl));
  }

  async behaviour(): Promise<BehaviourState> {
    const json = await this.state.guard(this.state.client.hget(this.#hash, "b"));
    if (json === null) return noBehaviour();
    const parsed = JSON.parse(json) as { delayMs?: number; rules?: unknown[] };
    return {
      delayMs: parsed.delayMs ?? 0,
      // Lua's JSON writer keeps no key order: each rule is put back in the order the control API uses.
      rules: Array.isArray(parsed.rules) ? parsed.rules.map((rule) => readRule(JSON.stringify(rule))) : [],
    };
  }

  async setBehaviour(behaviour: BehaviourState): Promise<void> {
    const empty = behaviour.delayMs === 0 && behaviour.rules.length === 0;
    const { state } = this;
    await state.guard(
      state.commands.petstoreSetBehaviour(this.#hash, this.#ttl, empty ? "" : JSON.stringify(behaviour)),
    );
  }

  record(entry: JournalRecord): void {
    const capacity = this.state.options.journalSize;
    if (capacity === 0) return;
    const { state } = this;
    // The answer is already decided; a journal entry Redis did not take is lost, never a failed request.
    state.commands.petstoreRecord(this.#journal, this.#ttl, capacity, JSON.stringify(entry)).catch(() => {});
  }

  async journal(): Promise<JournalRecord[]> {
    const entries = await this.state.guard(this.state.client.lrange(this.#journal, 0, -1));
    return entries.reverse().map((entry) => JSON.parse(entry) as JournalRecord);
  }

  async clearJournal(): Promise<void> {
    await this.state.guard(this.state.client.del(this.#journal));
  }

  /** Runs an order script: KEYS are the world's hash and `keys`; ARGV starts with the order's key, seed status and ttl. */
  #run(name: keyof Commands, id: bigint, keys: string[], ...rest: string[]): Promise<unknown> {
    const { state } = this;
    const key = orderKey(id);
    const index = state.seed.indexByKey.get(key);
    const seedStatus = index === undefined ? "" : (state.seed.orders[index] as StoredOrder).status;
    return state.guard(
      state.commands[name](this.#hash, ...keys, key, seedStatus, this.#ttl, ...rest) as Promise<unknown>,
    );
  }

  async #overlay(): Promise<Overlay> {
    return readOverlay(await this.state.guard(this.state.client.hgetall(this.#hash)));
  }
}

interface Overlay {
  version: string;
  /** How many orders differ from the seed. */
  changes: number;
  /** Every order in list order: the seed's, as changed, then those added. */
  listed(seed: Seed): Generator<StoredOrder>;
}

function readOverlay(fields: Record<string, string>): Overlay {
  const statuses = new Map<string, OrderStatus>();
  const records = new Map<string, string>();
  const removed = new Set<string>();
  const added: Array<[number, string]> = [];
  const touched = new Set<string>();
  for (const field in fields) {
    const value = fields[field] as string;
    const kind = field.slice(0, 2);
    const key = field.slice(2);
    if (kind === "s:") statuses.set(key, value as OrderStatus);
    else if (kind === "r:") records.set(key, value);
    else if (kind === "x:") removed.add(key);
    else if (kind === "a:") added.push([Number(value), key]);
    else continue;
    touched.add(key);
  }
  added.sort((a, b) => a[0] - b[0]);
  const addedKeys = new Set(added.map(([, key]) => key));
  return {
    version: fields.v ?? "0",
    changes: touched.size,
    *listed(seed) {
      for (const order of seed.orders) {
        if (addedKeys.has(order.key) || removed.has(order.key)) continue;
        const json = records.get(order.key);
        const status = statuses.get(order.key);
        yield json === undefined && status === undefined
          ? order
          : fromJson(order.key, json ?? order.json, status ?? order.status);
      }
      for (const [, key] of added) {
        yield fromJson(key, records.get(key) ?? "{}", statuses.get(key) ?? "pending");
      }
    },
  };
}

// A stored order rebuilt from Redis: only its key, JSON and status are read from here on.
function fromJson(key: string, json: string, status: OrderStatus): StoredOrder {
  return { key, json, status, record: { id: BigInt(key) } };
}

function readRule(json: string): BehaviourRule {
  const rule = JSON.parse(json) as BehaviourRule;
  return {
    operation: rule.operation,
    ...(rule.status !== undefined ? { status: rule.status } : {}),
    ...(rule.fault !== undefined ? { fault: rule.fault } : {}),
    ...(rule.times !== undefined ? { times: rule.times } : {}),
  };
}
