import type { Redis } from "ioredis";
import type { Seed } from "../core/seed.ts";
import type { SessionLimits } from "../core/world.ts";
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

type Script = (...args: (string | number)[]) => Promise<unknown>;
/** The scripts as ioredis defines them on the client, by name. */
export interface Commands {
  petstoreTouch: Script;
  petstoreTakeRule: Script;
  petstoreCancel: Script;
  petstoreSetStatus: Script;
  petstorePutOrder: Script;
  petstoreRemoveOrder: Script;
  petstoreBatch: Script;
  petstoreListBegin: Script;
  petstoreReset: Script;
  petstoreSetBehaviour: Script;
  petstoreRecord: Script;
  petstoreSessionsPage: Script;
}

/** What a world in Redis needs of the store it lives in (redis-state.ts): its client, scripts, keys and seed. */
export interface RedisBackend {
  readonly options: RedisStateOptions;
  readonly client: Redis;
  readonly commands: Commands;
  readonly seed: Seed;
  key(name: string): string;
}
