import type { JudgeTurns } from "./judge-turns.ts";
import { type ListJudge, type ListVerdict, rootNotArray } from "./list-judge.ts";
import type { MemoryBudget } from "./memory-budget.ts";

// A judge is handed this much at a time, so that a turn overruns its time by little even while the judge's
// code is still cold (its first few hundred kilobytes) and a socket's chunk takes longer than that.
const PIECE_BYTES = 16 * 1024;
// A turn of the judge on the proxy's own thread: a few milliseconds, then the forwarding's turn.
const TURN_MS = 4;
// While an answer is held whole anyway (--errors), no client waits on its bytes: the judge may then pace the
// upstream, pausing it past this backlog (or when the account is full) until half is judged.
const PACED_BACKLOG_BYTES = 8 * 1024 * 1024;

/** What a list's body gives its judge to work with, and hears back through. */
export interface FeedContext {
  /** The account of what all exchanges in flight hold: bytes waiting for the judge are held in it. */
  held: MemoryBudget;
  /** Whether the answer is held until judged (--errors): then the judge may pause the upstream. */
  holding: () => boolean;
  /** Pauses reading from the upstream (true), or goes on (false). */
  pause: (paused: boolean) => void;
  /** Some bytes were judged: the index grew, the held bytes went down. */
  progressed: () => void;
  /** The judge threw: a defect of the judge, met on this answer only. */
  failed: (error: unknown) => void;
}

/** A list's bytes on their way to a judge, on the proxy's thread or another. */
export interface ListFeed {
  /** Hands bytes over, held in the account until judged; false, holding nothing, when the account is full. */
  write(chunk: Buffer): boolean;
  /** Orders indexed so far (each costs the index about INDEXED_ORDER_BYTES). */
  readonly indexedOrders: number;
  /** What the judge's id index takes, as allocated: what the account is charged for it. */
  readonly indexBytes: number;
  /** The verdict once all that was written is judged; with `partial`, on what was judged until now. */
  end(partial?: string): Promise<ListVerdict>;
  /** Judges no more, and lets go of what waited. */
  drop(): void;
}

/** Bytes of all lists of one set of judges handed over and not judged yet. */
export interface Backlog {
  bytes: number;
}

/**
 * Whether a list's bytes are to be judged as they come rather than wait for the list's end: the judge gives
 * way to the forwarding of the same bytes (on two cores, judging a million-order list as it came made it
 * reach its client 1.39-1.69x as late as through a bare proxy, waiting for its end 1.16-1.37x), unless what
 * waits is past half the account's room (its limit less the reserves), the account is full, or the answer
 * is held until judged (--errors), so that no client waits on it.
 */
export function judgeNow(context: FeedContext, backlog: Backlog): boolean {
  const { held, holding } = context;
  return holding() || held.full || backlog.bytes * 2 > held.room;
}

/**
 * The first byte of a list's body that is no JSON whitespace, read from every chunk handed to its feed,
 * taken or refused: bytes the account could not hold are never judged, and a root that began among them
 * as anything but `[` still makes the body no list, which fails whatever else it holds.
 */
export class RootByte {
  byte: number | undefined;

  /** Reads a chunk until the root's first byte is found; then nothing more. */
  see(chunk: Uint8Array): void {
    if (this.byte !== undefined) return;
    for (const byte of chunk) {
      if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
      this.byte = byte;
      return;
    }
  }

  /** A verdict on a list judged in part that says nothing of its root: the root's first byte says it. */
  settle(verdict: ListVerdict): ListVerdict {
    if (verdict.partial === undefined || verdict.notArray || verdict.syntax !== undefined) return verdict;
    if (verdict.limit !== undefined) return verdict;
    const root = rootNotArray(this.byte);
    return root.notArray ? { ...verdict, ...root } : verdict;
  }
}

/** Where the proxy's list judges work: each list gets a feed. */
export interface ListJudges {
  feed(context: FeedContext): ListFeed;
  close(): Promise<void>;
}

/** Pacing of the upstream for a held answer: past the backlog it pauses, below half of it it goes on. */
export class Pacer {
  #paced = false;

  constructor(readonly context: FeedContext) {}

  /** Holds `bytes` for the judge: for a held answer always (pausing the upstream if need be), else if it can. */
  take(bytes: number, backlog: number): boolean {
    const { held, holding, pause } = this.context;
    if (!holding()) return held.tryTake(bytes);
    held.takeAnyway(bytes);
    if (!this.#paced && (held.full || backlog + bytes > PACED_BACKLOG_BYTES)) {
      this.#paced = true;
      pause(true);
    }
    return true;
  }

  /**
   * The judge caught up with `backlog` left: a paused upstream goes on below half, or once nothing waits
   * for the judge (no word of it would come again to go on later, however full the account is).
   */
  caughtUp(backlog: number): void {
    if (!this.#paced) return;
    if (backlog === 0 || (backlog < PACED_BACKLOG_BYTES / 2 && !this.context.held.full)) this.release();
  }

  release(): void {
    if (!this.#paced) return;
    this.#paced = false;
    this.context.pause(false);
  }
}

/**
 * Judges on the proxy's own thread, a few milliseconds at a time in turns all of them share (JudgeTurns),
 * so that every other exchange is served in between; the bytes not judged yet wait in the account, and as
 * on the judges' thread, until the list ends unless `judgeNow` says otherwise.
 */
export class InThreadJudges implements ListJudges {
  readonly #backlog: Backlog = { bytes: 0 };

  constructor(
    readonly newJudge: () => ListJudge,
    /** The forwarder's: every answer counts among those arriving while its bytes come. */
    readonly turns: JudgeTurns,
  ) {}

  feed(context: FeedContext): ListFeed {
    return new TurnFeed(this.newJudge(), this.turns, context, this.#backlog);
  }

  async close(): Promise<void> {}
}

class TurnFeed implements ListFeed {
  readonly #waiting: Buffer[] = [];
  #waitingBytes = 0;
  #judging = false;
  #caughtUp: (() => void) | undefined;
  readonly #pacer: Pacer;
  readonly #root = new RootByte();

  constructor(
    readonly judge: ListJudge,
    readonly turns: JudgeTurns,
    readonly context: FeedContext,
    readonly backlog: Backlog,
  ) {
    this.#pacer = new Pacer(context);
  }

  get indexedOrders(): number {
    return this.judge.indexedOrders;
  }

  get indexBytes(): number {
    return this.judge.indexBytes;
  }

  write(chunk: Buffer): boolean {
    this.#root.see(chunk);
    if (!this.#pacer.take(chunk.length, this.#waitingBytes)) return false;
    this.#waiting.push(chunk);
    this.#waitingBytes += chunk.length;
    this.backlog.bytes += chunk.length;
    if (judgeNow(this.context, this.backlog)) this.#startJudging();
    return true;
  }

  #ending: Promise<ListVerdict> | undefined;

  /** Told once, as the judges' thread is: a second end has the first's verdict, never a wait of its own. */
  end(partial?: string): Promise<ListVerdict> {
    this.#ending ??= this.#end(partial);
    return this.#ending;
  }

  async #end(partial?: string): Promise<ListVerdict> {
    if (partial !== undefined) {
      this.#letGo();
      return this.#root.settle(this.judge.endPartial(partial));
    }
    if (this.#waiting.length > 0) {
      const caughtUp = new Promise<void>((resolve) => (this.#caughtUp = resolve));
      this.#startJudging();
      await caughtUp;
    }
    return this.#root.settle(this.judge.end());
  }

  drop(): void {
    this.#letGo();
    this.judge.drop();
  }

  /** What waits for the judge is let go of. */
  #letGo(): void {
    this.context.held.give(this.#waitingBytes);
    this.backlog.bytes -= this.#waitingBytes;
    this.#waiting.length = 0;
    this.#waitingBytes = 0;
    this.#pacer.release();
  }

  #startJudging(): void {
    if (this.#judging) return;
    this.#judging = true;
    this.turns.want(this.#turn);
  }

  readonly #turn = (): boolean => {
    const started = performance.now();
    while (this.#waiting.length > 0 && performance.now() - started < TURN_MS) {
      let piece = this.#waiting[0] as Buffer;
      if (piece.length > PIECE_BYTES) {
        this.#waiting[0] = piece.subarray(PIECE_BYTES);
        piece = piece.subarray(0, PIECE_BYTES);
      } else this.#waiting.shift();
      this.#waitingBytes -= piece.length;
      this.backlog.bytes -= piece.length;
      this.context.held.give(piece.length);
      try {
        this.judge.write(piece);
      } catch (error) {
        this.drop();
        this.context.failed(error);
      }
    }
    this.context.progressed();
    this.#pacer.caughtUp(this.#waitingBytes);
    if (this.#waiting.length > 0) return true;
    this.#judging = false;
    this.#caughtUp?.();
    return false;
  };
}
