import { Worker } from "node:worker_threads";
import type { FromJudge, JudgeWorkerData, ToJudge } from "./judge-worker.ts";
import {
  type Backlog,
  type FeedContext,
  judgeNow,
  type ListFeed,
  type ListJudges,
  Pacer,
  RootByte,
} from "./list-feed.ts";
import type { ListVerdict } from "./list-judge.ts";
import { MemoryBudget } from "./memory-budget.ts";
import { OrderIndex } from "./order-index.ts";
import { ResizableBuffer } from "./resizable-buffer.ts";
import { receivedVerdict } from "./verdict-transfer.ts";

// A list's bytes cross to the thread in blocks of this size, packed from its chunks into a resizable block
// and moved over by the message (a transfer, no copy): what waits for the judge is memory of the judge's
// thread, never array buffers of the proxy's, whose growth would make the proxy's collector stop its event
// loop again and again while a large list passes. The thread shrinks each block to nothing once judged, so
// its pages go back to the system then, not when that thread's collector comes to it: blocks judged and
// left for the collector are memory outside the account.
export const BLOCK_BYTES = 64 * 1024;

/**
 * The thread's entry: the build's JavaScript beside this module's chunk; or, for the source under tsx, a
 * few lines that register tsx in the thread first (Node 20 resolves a worker's entry before any --import
 * hook of the thread would run).
 */
function startWorker(workerData: JudgeWorkerData, resourceLimits: HeapLimits): Worker {
  if (!import.meta.url.endsWith(".ts"))
    return new Worker(new URL("./judge-worker.js", import.meta.url), { workerData, resourceLimits });
  const tsx = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./judge-worker.ts", import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, workerData, resourceLimits });
}

/** The judges' thread's heap, in MB (V8's resource limits of a worker). */
export interface HeapLimits {
  maxOldGenerationSizeMb?: number;
  maxYoungGenerationSizeMb?: number;
}

/** What the account gives the judges' thread, fixed while it runs. */
export interface JudgesShare {
  /** The thread's heap: V8 ends a thread that would grow past it. */
  limits: HeapLimits;
  /** Taken from the account while the thread runs: its heap's bounds and what the thread costs beside them. */
  reserve: number;
  /**
   * What the judges on the thread may hold at once in that heap, each list taking before it holds: the
   * values being read, the records and repeated ids kept until a verdict. Past it a list is judged in part.
   */
  room: number;
}

const MiB = 1024 * 1024;
// The judges' share: half of the account (at the default, room to read one string of --max-string's
// default), and never less than a thread judging sixteen lists at once needs (below twice that, the account
// holds half of it and the thread's heap is its least all the same).
const SHARE_OF_ACCOUNT = 2;
const LEAST_SHARE_MB = 28;
// What a started thread costs beside its heap: its isolate, stacks and what its code allocates natively.
const BESIDE_HEAP_MB = 8;
// The heap a thread holds before judging anything: its code, the contract's validators.
const HEAP_AT_START_MB = 8;
// The young generation: a sixteenth of the account, within bounds that keep the scavenger neither
// constant nor idle.
const YOUNG_MIN_MB = 4;
const YOUNG_MAX_MB = 16;

/**
 * The judges' thread's share of an account of `accountBytes`: half of it (28 MiB at least), reserved
 * while the thread runs, its heap bounded to fit within it. Of the old generation past what the thread
 * starts with, the judges hold half, so that the collector has the rest to free what was handed on and a
 * thread never dies of what its lists hold.
 */
export function judgesShare(accountBytes: number): JudgesShare {
  const accountMb = Math.floor(accountBytes / MiB);
  const shareMb = Math.max(LEAST_SHARE_MB, Math.floor(accountMb / SHARE_OF_ACCOUNT));
  const youngMb = Math.min(YOUNG_MAX_MB, Math.max(YOUNG_MIN_MB, Math.ceil(accountMb / 16)));
  const oldMb = shareMb - youngMb - BESIDE_HEAP_MB;
  return {
    limits: { maxOldGenerationSizeMb: oldMb, maxYoungGenerationSizeMb: youngMb },
    reserve: Math.min(shareMb * MiB, Math.floor(accountBytes / 2)),
    room: ((oldMb - HEAP_AT_START_MB) / 2) * MiB,
  };
}

/** What the proxy gives its list judges: the thread's start, and the account it takes its share of. */
export interface WorkerJudgesOptions extends Omit<JudgeWorkerData, "room"> {
  /** The proxy's account (MemoryBudget#shared and its limit). */
  account?: { shared: SharedArrayBuffer; limit: number };
}

/**
 * The proxy's list judges on a worker thread of their own, started with the first large list: the proxy's
 * thread only forwards, hands each chunk over (a copy, held in the account until the thread says it is
 * judged) and reads the verdict back. The thread runs within its share of the account (`judgesShare`). A
 * thread that dies (its heap outgrown, or any fault) ends the lists it held, each said not judged whole with
 * why, never the proxy, and the next list starts another.
 */
export class WorkerJudges implements ListJudges {
  #worker: Worker | undefined;
  #nextId = 1;
  readonly #feeds = new Map<number, WorkerFeed>();
  /** Bytes of all lists handed over and not judged yet. */
  readonly #backlog: Backlog = { bytes: 0 };

  constructor(
    readonly options: WorkerJudgesOptions,
    /** The thread's share: by default from the account's limit; none without an account. */
    readonly share: JudgesShare | undefined = options.account && judgesShare(options.account.limit),
  ) {}

  feed(context: FeedContext): ListFeed {
    const id = this.#nextId++;
    const feed = new WorkerFeed(
      id,
      context,
      this.#backlog,
      (message, transfer) => this.#post(message, transfer),
      () => this.#feeds.delete(id),
    );
    this.#feeds.set(id, feed);
    return feed;
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #post(message: ToJudge, transfer?: ArrayBuffer[]): void {
    this.#worker ??= this.#start();
    this.#worker.postMessage(message, transfer);
  }

  #start(): Worker {
    const { account, ...data } = this.options;
    const { share } = this;
    const budget = account && new MemoryBudget(account.limit, account.shared);
    const reserve = share?.reserve ?? 0;
    budget?.reserve(reserve);
    const worker = startWorker(share ? { ...data, room: share.room } : data, share?.limits ?? {});
    // The proxy's stop decides when it ends, never a judge still at work.
    worker.unref();
    worker.on("message", (message: FromJudge) => {
      this.#feeds.get(message.id)?.heard(message);
    });
    let gone = false;
    const lost = (reason: string) => {
      if (this.#worker === worker) this.#worker = undefined;
      if (budget && !gone) budget.unreserve(reserve);
      gone = true;
      for (const feed of [...this.#feeds.values()]) feed.lost(reason);
    };
    worker.on("error", (error: Error & { code?: string }) =>
      lost(
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? this.#heapOutgrown()
          : `the judges' thread failed (${error.message})`,
      ),
    );
    worker.on("exit", (code) => lost(`the judges' thread stopped (exit code ${code})`));
    return worker;
  }

  #heapOutgrown(): string {
    const { maxOldGenerationSizeMb: old, maxYoungGenerationSizeMb: young } = this.share?.limits ?? {};
    return `over the memory budget (the judges' thread outgrew its heap of ${(old ?? 0) + (young ?? 0)} MB)`;
  }
}

/** The verdict on a list of which nothing could be judged, the judges' thread gone (`reason`). */
function unjudgedVerdict(reason: string): ListVerdict {
  const none = () => ({ count: 0, first: [] });
  return {
    bytes: 0,
    count: 0,
    invalid: none(),
    duplicates: none(),
    exposingStatus: none(),
    unindexed: 0,
    orders: new OrderIndex(),
    repeats: new Map(),
    records: new Map(),
    allRecords: false,
    partial: `${reason}: nothing of this list was judged`,
  };
}

class WorkerFeed implements ListFeed {
  #indexedOrders = 0;
  #indexBytes = 0;
  /** Why the list's thread is gone (its heap outgrown, or a fault): it ends unjudged, whatever comes of it. */
  #unjudged: string | undefined;
  /** Bytes handed over and not yet judged, held in the account. */
  #outstanding = 0;
  /** The block being filled, moved to the thread when full (a new one made then), and how much of it is. */
  #block: Uint8Array | undefined;
  #filled = 0;
  #dropped = false;
  #ended = false;
  #verdict: { resolve: (verdict: ListVerdict) => void; reject: (error: Error) => void } | undefined;
  #ending: Promise<ListVerdict> | undefined;
  readonly #pacer: Pacer;
  readonly #root = new RootByte();

  constructor(
    readonly id: number,
    readonly context: FeedContext,
    readonly backlog: Backlog,
    readonly post: (message: ToJudge, transfer?: ArrayBuffer[]) => void,
    readonly forget: () => void,
  ) {
    this.#pacer = new Pacer(context);
  }

  get indexedOrders(): number {
    return this.#indexedOrders;
  }

  get indexBytes(): number {
    return this.#indexBytes;
  }

  write(chunk: Buffer): boolean {
    this.#root.see(chunk);
    if (this.#unjudged !== undefined) return false;
    if (this.#dropped || !this.#pacer.take(chunk.length, this.#outstanding)) return false;
    this.#outstanding += chunk.length;
    this.backlog.bytes += chunk.length;
    // Copied into a block of the list's own, never the chunk itself moved: a socket's chunk may share its
    // memory with others, and is still being written to the client.
    for (let at = 0; at < chunk.length; ) {
      this.#block ??= new Uint8Array(new ResizableBuffer(BLOCK_BYTES, { maxByteLength: BLOCK_BYTES }));
      const length = Math.min(BLOCK_BYTES - this.#filled, chunk.length - at);
      this.#block.set(chunk.subarray(at, at + length), this.#filled);
      this.#filled += length;
      at += length;
      if (this.#filled === BLOCK_BYTES) this.#send();
    }
    // Bytes to be judged at once go now, in a block not yet full.
    if (judgeNow(this.context, this.backlog)) this.#send();
    return true;
  }

  /** The block filled so far moves to the thread (the next write makes another). */
  #send(): void {
    const block = this.#block;
    if (block === undefined || this.#filled === 0) return;
    const buffer = block.buffer as ResizableBuffer;
    // A partly filled block gives back the pages past its bytes before it goes.
    if (this.#filled < BLOCK_BYTES) buffer.resize(this.#filled);
    this.#block = undefined;
    this.#filled = 0;
    this.post({ id: this.id, chunk: new Uint8Array(buffer), now: judgeNow(this.context, this.backlog) }, [
      buffer,
    ]);
  }

  end(partial?: string): Promise<ListVerdict> {
    if (this.#unjudged !== undefined)
      return Promise.resolve(this.#root.settle(unjudgedVerdict(this.#unjudged)));
    // Told once: a second end would have the thread judge a list of nothing under this id, and its verdict
    // answer the second promise, never the first.
    if (this.#ending) return this.#ending;
    // Its thread forgot it: no verdict can come, so none is waited for.
    if (this.#dropped)
      return Promise.reject(new Error("the list's judge was let go of before the list ended"));
    this.#ended = true;
    const verdict = new Promise<ListVerdict>((resolve, reject) => (this.#verdict = { resolve, reject }));
    this.#ending = verdict;
    this.#send();
    // What waits is judged first, even at a partial end: it stays held until the thread says so.
    this.post(partial === undefined ? { id: this.id, end: true } : { id: this.id, end: true, partial });
    return verdict;
  }

  drop(): void {
    if (this.#dropped) return;
    // Once ended, the thread is at work on what waits: held until it is heard of, then let go of.
    if (this.#ended) return;
    this.post({ id: this.id, drop: true });
    this.forget();
    this.#letGo();
  }

  /** A message from the thread about this list. */
  heard(message: FromJudge): void {
    if ("judged" in message) {
      if (this.#dropped) return;
      this.#outstanding -= message.judged;
      this.backlog.bytes -= message.judged;
      this.context.held.give(message.judged);
      this.#indexedOrders = message.indexedOrders;
      this.#indexBytes = message.indexBytes;
      this.context.progressed();
      this.#pacer.caughtUp(this.#outstanding);
      return;
    }
    this.forget();
    if ("verdict" in message) {
      this.#letGo();
      this.#verdict?.resolve(this.#root.settle(receivedVerdict(message.verdict)));
    } else this.#fail(Object.assign(new Error(message.fault), { stack: message.stack }));
  }

  /**
   * The thread is gone, with all it held of the list: nothing of it is judged, whoever's fault that was (its
   * heap outgrown, a fault of the thread), and it is never failed for it. A list still coming is refused
   * more bytes and ends unjudged; one that ended gets that verdict.
   */
  lost(reason: string): void {
    this.forget();
    this.#unjudged = reason;
    this.#letGo();
    this.#verdict?.resolve(this.#root.settle(unjudgedVerdict(reason)));
  }

  #fail(error: Error): void {
    const wasDropped = this.#dropped;
    // Let go of first: the body, told of the failure, drops this feed, and nothing is left to send then.
    this.#letGo();
    if (this.#verdict) this.#verdict.reject(error);
    else if (!wasDropped) this.context.failed(error);
  }

  #letGo(): void {
    if (this.#dropped) return;
    this.#dropped = true;
    this.#block = undefined;
    this.#filled = 0;
    this.context.held.give(this.#outstanding);
    this.backlog.bytes -= this.#outstanding;
    this.#outstanding = 0;
    this.#pacer.release();
  }
}
