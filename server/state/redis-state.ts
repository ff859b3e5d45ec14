import { Redis, ReplyError } from "ioredis";
import type { Seed } from "../core/seed.ts";
import { createSessions, type Sessions } from "../core/sessions.ts";
import type { SessionsPage, SessionsQuery, StateStore } from "../core/world.ts";
import type { Commands, RedisBackend, RedisStateOptions } from "./redis-backend.ts";
import * as scripts from "./redis-scripts.ts";
import { RedisWorld } from "./redis-world.ts";

/** Session names one control page looks at, at most: idle ones no use has taken out yet are skipped. */
const SESSIONS_PAGE_LOOK = 10_000;

// Errors Redis sends while it cannot serve yet (loading its data, a failover): as unreachable as a closed port.
const NOT_SERVING = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN)\b/;

/**
 * Worlds in Redis, shared by every mock process on the same store and prefix. Each step is one script run
 * atomically in Redis (redis-scripts.ts). The fixtures stay in each process: Redis holds what changed.
 */
export type { RedisStateOptions } from "./redis-backend.ts";

export class RedisState implements StateStore, RedisBackend {
  readonly description: string;
  readonly defaultWorld: RedisWorld;
  readonly client: Redis;
  #seed: Seed;
  // Session world objects hold a cached list body; they go as sessions do in memory, idle or least recently used.
  readonly #worlds: Sessions<RedisWorld>;

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
    script("petstoreTouch", scripts.TOUCH, 4);
    script("petstoreTakeRule", scripts.TAKE_RULE, 1);
    script("petstoreCancel", scripts.CANCEL, 1);
    script("petstoreSetStatus", scripts.SET_STATUS, 1);
    script("petstorePutOrder", scripts.PUT_ORDER, 2);
    script("petstoreRemoveOrder", scripts.REMOVE_ORDER, 2);
    script("petstoreBatch", scripts.BATCH, 2);
    script("petstoreListBegin", scripts.LIST_BEGIN, 2);
    script("petstoreReset", scripts.RESET, 2);
    script("petstoreSetBehaviour", scripts.SET_BEHAVIOUR, 1);
    script("petstoreRecord", scripts.RECORD, 1);
    script("petstoreSessionsPage", scripts.SESSIONS_PAGE, 2);
    this.defaultWorld = new RedisWorld(this, null, Date.now());
    this.#worlds = createSessions(options.limits, (name, now) => new RedisWorld(this, name, now));
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

  session(name: string, now: number): RedisWorld {
    const world = this.#worlds.use(name, now);
    world.touch();
    return world;
  }

  /** One script: the page's names from the name index, and three counts of each one's hash, never the hash. */
  async sessions(now: number, { after, limit }: SessionsQuery): Promise<SessionsPage> {
    const answer = (await this.commands.petstoreSessionsPage(
      this.key("sessions"),
      this.key("session-names"),
      now - this.options.limits.idleMs,
      after ?? "",
      limit,
      SESSIONS_PAGE_LOOK,
      this.options.prefix,
    )) as (string | number)[];
    const [total, next] = answer;
    const sessions: SessionsPage["sessions"] = [];
    for (let at = 2; at < answer.length; at += 5) {
      const [name, lastUsed, added, removed, changes] = answer.slice(at, at + 5);
      sessions.push({
        name: String(name),
        orders: this.#seed.size - Number(removed) + Number(added),
        changes: Number(changes),
        lastUsed: Number(lastUsed),
      });
    }
    return next === ""
      ? { sessions, total: Number(total) }
      : { sessions, next: String(next), total: Number(total) };
  }

  reload(seed: Seed): void {
    this.#seed = seed;
    this.#forgetCaches();
  }

  healthy(): boolean {
    return this.client.status === "ready";
  }

  async close(): Promise<void> {
    this.client.removeAllListeners("error");
    await this.client.quit().catch(() => this.client.disconnect());
  }

  /** Errors from a Redis that cannot be reached or cannot serve yet: the core answers them 503. */
  unreachable(error: unknown): boolean {
    if (!(error instanceof Error)) return false;
    return !(error instanceof ReplyError) || NOT_SERVING.test(error.message);
  }

  #forgetCaches(): void {
    this.defaultWorld.forgetCache();
    for (const world of this.#worlds.list(Date.now())) world.forgetCache();
  }

  #watchConnection(): void {
    let up = true;
    const change = (now: boolean, detail: string) => {
      if (now === up) return;
      up = now;
      // Redis may have lost its data while away: cached list bodies could name versions it reuses.
      this.#forgetCaches();
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
