import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** What the proxy holds of all the answers in flight together, at most, before it holds less of each. */
export const HELD_BYTES_LIMIT = 256 * 1024 * 1024;
/** The most the forwarding's reserve takes of the account (see `forwardingReserve`). */
const FORWARDING_RESERVE_BYTES = 16 * 1024 * 1024;

/**
 * What the process's forwarding keeps beyond the account's holders, reserved from the account up front:
 * chunks forwarded and taken by the clients' connections stay in memory until the collector comes to them,
 * whatever the traffic is judged with. 16 MiB, at most a quarter of the account.
 */
export function forwardingReserve(accountBytes: number): number {
  return Math.min(FORWARDING_RESERVE_BYTES, Math.floor(accountBytes / 4));
}

/** The proxy's account of `limit` bytes (default HELD_BYTES_LIMIT), the forwarding's reserve taken. */
export function proxyAccount(limit?: number): MemoryBudget {
  const account = new MemoryBudget(limit);
  account.reserve(forwardingReserve(account.limit));
  return account;
}

/** The least of what chunks let go of may owe the account before the collector is run for them. */
const LEAST_UNCOLLECTED_BYTES = 1024 * 1024;
/** What chunks let go of may owe at most, as a share of the traffic's room, before the collector is run. */
const UNCOLLECTED_SHARE = 8;

let collector: ((options?: { type: "minor" }) => void) | undefined;

/**
 * Runs the collector now: the young generation only (`full` false), where chunks let go of soon after they
 * came are, or the whole heap. Node does not name it without --expose-gc: the flag is set once.
 */
export function collectGarbage(full: boolean): void {
  if (collector === undefined) {
    setFlagsFromString("--expose-gc");
    collector = runInNewContext("gc") as (options?: { type: "minor" }) => void;
  }
  if (full) collector();
  else collector({ type: "minor" });
}

/** What one order costs an id index of the judge or of a kept list: id, digests and the table's share. */
export const INDEXED_ORDER_BYTES = 32;

/**
 * The bytes every exchange in flight holds at once: the starts of bodies kept for the checks and the HAR,
 * a list's bytes waiting for its judge, the answers held with --errors until judged. Per-exchange limits
 * alone let a hundred concurrent answers hold a hundred times each; this one account is shared, and each
 * holder asks it before holding more and gives back when done.
 */
export class MemoryBudget {
  /**
   * The count, in memory another thread may share: the judges' thread reserves its share of the account
   * through the same count, so that the one limit holds for both threads.
   */
  readonly #cell: BigInt64Array;

  constructor(
    readonly limit: number = HELD_BYTES_LIMIT,
    /** Another thread's account (its `shared`), to hold from the same count. */
    shared?: SharedArrayBuffer,
  ) {
    // What is held, then what of it is reserved (see `reserve`).
    this.#cell = new BigInt64Array(shared ?? new SharedArrayBuffer(16));
  }

  /** The count's memory, for another thread to make the same account of with `new MemoryBudget(limit, shared)`. */
  get shared(): SharedArrayBuffer {
    return this.#cell.buffer as SharedArrayBuffer;
  }

  get held(): number {
    return Number(Atomics.load(this.#cell, 0));
  }

  /**
   * Holds bytes for what grows the process outside every holder (the judges' thread, chunks the collector
   * has not come to): the traffic gets the rest, `room`.
   */
  reserve(bytes: number): void {
    this.take(bytes);
    Atomics.add(this.#cell, 1, BigInt(bytes));
  }

  unreserve(bytes: number): void {
    Atomics.sub(this.#cell, 1, BigInt(bytes));
    this.give(bytes);
  }

  /** What the traffic may hold: the limit less the reserves. */
  get room(): number {
    return this.limit - Number(Atomics.load(this.#cell, 1));
  }

  /** Whether the account is at its limit: a holder that can go on without holding more should. */
  get full(): boolean {
    // Full of chunks let go of is not full: the collector frees them.
    if (this.held >= this.limit && this.#uncollected >= LEAST_UNCOLLECTED_BYTES) this.collect();
    return this.held >= this.limit;
  }

  /**
   * Called when a holder is short of room: what can be let go of (the lists the state rules keep) is, so
   * that exchanges in flight come first.
   */
  reclaim: ((bytes: number) => void) | undefined;

  /**
   * Chunks let go of, still charged: a socket's chunk is freed when the collector comes to it, not when its
   * last holder lets go, and V8 waits for tens of MiB of such memory, longer on a busy machine, before it
   * runs. So they stay in the account until the collector has run (see `letGo`), which makes that wait
   * part of the budget rather than beside it.
   */
  #uncollected = 0;

  /** Bytes let go of and still charged until the collector runs. */
  get uncollected(): number {
    return this.#uncollected;
  }

  /**
   * A holder on this thread let go of chunks of `bytes` that only the collector frees: their charge stays
   * (taken now when `charged` is false: they were never held) until it has run, which is done once they
   * owe an eighth of the traffic's room (at least 1 MiB), or a holder is short of room they would free.
   */
  letGo(bytes: number, charged = true): void {
    if (bytes <= 0) return;
    if (!charged) this.take(bytes);
    this.#uncollected += bytes;
    if (this.#uncollected >= Math.max(LEAST_UNCOLLECTED_BYTES, Math.floor(this.room / UNCOLLECTED_SHARE)))
      this.collect();
  }

  /** Bytes forwarded since the collector last ran (see `forwarded`). */
  #forwardedSince = 0;

  /**
   * The forwarding passed `bytes` on: socket chunks that are garbage once written, which only the collector
   * frees and V8 lets grow to 64 MB of such memory before it runs for them. Past half the forwarding's
   * reserve a young collection runs, so what the forwarding leaves behind stays within that reserve.
   */
  forwarded(bytes: number): void {
    this.#forwardedSince += bytes;
    if (this.#forwardedSince < forwardingReserve(this.limit) / 2) return;
    this.#forwardedSince = 0;
    collectGarbage(false);
  }

  /** What was given back by young collections alone, since the last full one. */
  #sinceFullCollection = 0;

  /**
   * Runs the collector for the chunks let go of, and gives back what they owed: a young collection, and a
   * full one once young ones gave back as much as the traffic's room (a chunk held through two of them
   * has left the young generation, and only a full one frees it).
   */
  collect(): void {
    const owed = this.#uncollected;
    if (owed === 0) return;
    const full = this.#sinceFullCollection + owed >= this.room;
    collectGarbage(full);
    this.#sinceFullCollection = full ? 0 : this.#sinceFullCollection + owed;
    this.#uncollected = 0;
    this.give(owed);
  }

  /** Holds bytes when there is room for them, after reclaiming if need be; false, holding nothing, when not. */
  tryTake(bytes: number): boolean {
    // Chunks let go of first: a collection is cheaper than forgetting kept lists, and too dear to run for
    // a few kilobytes.
    if (this.held + bytes > this.limit && this.#uncollected >= LEAST_UNCOLLECTED_BYTES) this.collect();
    if (this.held + bytes > this.limit) this.reclaim?.(this.held + bytes - this.limit);
    const wanted = BigInt(bytes);
    const limit = BigInt(this.limit);
    for (;;) {
      const held = Atomics.load(this.#cell, 0);
      if (held + wanted > limit) return false;
      // The other thread may have taken or given in between: then the count is read again.
      if (Atomics.compareExchange(this.#cell, 0, held, held + wanted) !== held) continue;
      return true;
    }
  }

  /** Holds bytes whatever the account says, for a holder that must hold a little to make any progress. */
  take(bytes: number): void {
    Atomics.add(this.#cell, 0, BigInt(bytes));
  }

  /** Holds bytes that must be held, having first let go of what can be (`reclaim`) to make room for them. */
  takeAnyway(bytes: number): void {
    if (!this.tryTake(bytes)) this.take(bytes);
  }

  give(bytes: number): void {
    Atomics.sub(this.#cell, 0, BigInt(bytes));
  }
}
