import type { IncomingMessage } from "node:http";
import { formatBytes } from "../../common/byte-size.ts";
import type { ListVerdict } from "../judging/list-judge.ts";
import type { MemoryBudget } from "../judging/memory-budget.ts";
import { ResizableBuffer } from "../judging/resizable-buffer.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { Exchange, ExchangeEnd, ExchangeTap, HeldReply, UpstreamHead } from "./exchange-lifecycle.ts";
import { HELD_IN_MEMORY_BYTES, type HeldSpill, SPILL_BACKLOG_BYTES, type SpillFolder } from "./held-spill.ts";
import { sendError, upstreamCors } from "./own-answer.ts";

// A held answer's first block when its size is not given; it doubles from there.
const FIRST_STORE_BYTES = 64 * 1024;

// How often the held answers waiting for room are retried, and after how many looks at an account that
// did not go down while every one of them waited the one holding the most is let go of.
const ROOM_POLL_MS = 10;
const STUCK_POLLS = 5;

/** The client's side of a held answer, and the reading of the upstream behind it. */
export interface HeldAnswerClient {
  /** Starts the answer to the client: its status line and headers. */
  start: () => void;
  /** Writes a chunk of the body; `flushed` is called once the connection took it (or failed to). */
  write: (chunk: Buffer, flushed: () => void) => void;
  end: () => void;
  /** Cuts the answer short: its bytes could not all be sent. */
  cut: () => void;
  /** Pauses reading from the upstream (true) while the answer waits for room, or goes on (false). */
  pause: (paused: boolean) => void;
}

/**
 * An answer held until it is judged (--errors), so that one that breaks a rule can be replaced: its first
 * HELD_IN_MEMORY_BYTES are kept in one block of its own, reserved in the shared account before it is made
 * (the size the upstream gave, else doubled as it fills), so that answers let go of are few large blocks
 * rather than many chunks; the rest goes to a spill file (`spills`), read back to the client after the
 * verdict at the pace its connection takes it. When the account has no room for the block to grow, or the
 * file is behind, the upstream is not read (its connection's own flow control holds the rest) until room
 * frees (`HeldRoom`). Past the body limit, let go of to make room, or when the file can take no more, it
 * goes on as it comes (the bytes held so far first), saying why. Bytes handed to the client stay in the
 * account until its connection took them: a slow client holds them in the proxy's memory all the same.
 */
export class HeldAnswer {
  #holding: boolean;
  #upstreamEnded = false;
  /** The held bytes: `#filled` of them, in a block charged to the account at its whole length. */
  #store: ResizableBuffer | undefined;
  #filled = 0;
  /** Chunks that came while the block had no room to grow: they exist, so they are charged all the same. */
  readonly #pending: Buffer[] = [];
  #pendingBytes = 0;
  #waiting = false;
  /** The bytes past the block, once there are any (none while no folder is given, or none could be made). */
  #spill: HeldSpill | undefined;
  #spills: SpillFolder | undefined;
  /** The spill file is on its way to the client: chunks that come meanwhile wait after it. */
  #replaying = false;
  readonly #tail: Buffer[] = [];
  #tailBytes = 0;
  #readingPaused = false;
  /** Bytes written to the client and not yet taken by its connection. */
  #flushing = 0;
  #closed = false;
  /** Why the answer went on before it was judged. */
  unheld: string | undefined;

  constructor(
    holding: boolean,
    readonly held: MemoryBudget,
    readonly maxBodyBytes: number,
    readonly names: SettingNames,
    readonly client: HeldAnswerClient,
    readonly room: HeldRoom = new HeldRoom(held, names),
    /** The body's size as the upstream gave it (Content-Length), when it did. */
    readonly expected?: number,
    /** Where bytes past the block go; without it the whole answer is held in memory. */
    spills?: SpillFolder,
  ) {
    this.#holding = holding;
    this.#spills = spills;
    if (holding) room.reading(this);
  }

  get holding(): boolean {
    return this.#holding;
  }

  /** Whether the answer still writes to the client itself: held, or its spill file on its way. */
  get sending(): boolean {
    return this.#holding || this.#replaying;
  }

  /** Bytes this answer holds in the account: its block, what waits to go into it or to its file. */
  get holds(): number {
    return this.#ownBytes + (this.#spill?.backlog ?? 0);
  }

  get #ownBytes(): number {
    return (this.#store?.byteLength ?? 0) + this.#pendingBytes + this.#tailBytes;
  }

  /** Keeps a chunk (`size`: the body's bytes so far with it) while held; false once the answer goes on. */
  take(chunk: Buffer, size: number): boolean {
    if (this.#replaying) return this.#toTail(chunk);
    if (!this.#holding) {
      // Passed on as it comes from here, by the exchange, which holds it only until the connection took it:
      // then it waits for the collector, charged until it ran, as every chunk of a held answer does.
      this.held.letGo(chunk.length, false);
      return false;
    }
    if (size > this.maxBodyBytes)
      return this.#goOnWith(chunk, `the answer is larger than ${this.names.maxBody}`);
    if (this.#pending.length === 0 && this.#place(chunk)) return true;
    if (this.#filled + this.#pendingBytes + chunk.length > this.held.room)
      return this.#goOnWith(
        chunk,
        `the answer is larger than the ${formatBytes(this.held.room)} the proxy may hold of answers in flight (${this.names.maxMemory})`,
      );
    this.held.take(chunk.length);
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    if (!this.#waiting) {
      this.#waiting = true;
      this.#reconsiderReading();
      this.room.wait(this);
    }
    return true;
  }

  /** Room may have freed: what waits goes into the block. True once nothing waits and reading goes on. */
  retry(): boolean {
    if (!this.#holding) return true;
    while (this.#pending.length > 0) {
      const chunk = this.#pending[0] as Buffer;
      if (!this.#place(chunk)) return false;
      this.#pending.shift();
      this.#pendingBytes -= chunk.length;
      this.held.give(chunk.length);
    }
    this.#waiting = false;
    this.#reconsiderReading();
    return true;
  }

  /**
   * Let go of to make room: it goes on to the client as it is; its judging goes on as for any answer not
   * held (a violation found then is reported, not replaced).
   */
  release(reason: string): void {
    if (!this.#holding) return;
    this.#goOn(reason);
  }

  /** Its judging stopped short: held further it could not be replaced for more than what was judged. */
  judgedShort(reason: string): void {
    if (this.#holding) this.#goOn(reason);
  }

  /** The upstream's last byte came (its verdict may still be on its way). */
  upstreamEnded(): void {
    this.#upstreamEnded = true;
  }

  /** The answer's last byte came while held: it waits for its verdict, no longer for room. */
  ended(): void {
    if (this.#holding) this.room.judging(this);
  }

  /**
   * Held no more, for its verdict: true when it was still held, false when it went on already (to make
   * room, or judged in part), and nothing more is to be done with it.
   */
  letGo(): boolean {
    if (!this.#holding) return false;
    this.#holding = false;
    this.room.forget(this);
    return true;
  }

  /** Passes the answer on whole as it came, once judged (unless it went on already, and ended there). */
  pass(): void {
    if (!this.letGo()) return;
    this.client.start();
    this.#sendHeld(() => this.client.end());
  }

  /**
   * What it holds goes back to the account, and its file is closed unless on its way to the client; what
   * the client's connection has yet to take stays.
   */
  giveBack(): void {
    this.room.forget(this);
    // The block's pages go back at once; the chunks, when the collector comes to them. While the file is on
    // its way, what came after it waits to follow it (its charge with it).
    this.held.give(this.#store?.byteLength ?? 0);
    this.held.letGo(this.#pendingBytes + (this.#replaying ? 0 : this.#tailBytes));
    if (!this.#replaying) this.#spill?.dispose();
    this.#store?.resize(0);
    this.#store = undefined;
    this.#filled = 0;
    this.#pending.length = 0;
    this.#pendingBytes = 0;
    if (this.#replaying) return;
    this.#tail.length = 0;
    this.#tailBytes = 0;
  }

  /** The client's connection closed: what it had not taken goes back to the account, and the file is closed. */
  closed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#spill?.dispose();
    this.held.letGo(this.#flushing + this.#tailBytes);
    this.#flushing = 0;
    this.#tail.length = 0;
    this.#tailBytes = 0;
  }

  /**
   * Keeps a chunk: in the block up to its share of memory while the account has room for it to grow, past
   * that in the file. False when the block has no room and there is no file to go to.
   */
  #place(chunk: Buffer): boolean {
    if (this.#spill === undefined) {
      const share = this.#spills === undefined ? Number.POSITIVE_INFINITY : HELD_IN_MEMORY_BYTES;
      if (this.#filled + chunk.length <= share && this.#fits(chunk.length)) {
        this.#keep(chunk);
        return true;
      }
      if (this.#spills === undefined) return false;
      // No file could be made: from here the answer is held in memory, as far as the account allows.
      if (!this.#openSpill()) return this.#place(chunk);
    }
    this.#spill?.append(chunk);
    this.#reconsiderReading();
    return true;
  }

  /** Whether a spill file is open; when none can be made (said once), the answer has no folder from here. */
  #openSpill(): boolean {
    const spills = this.#spills;
    if (spills === undefined) return false;
    this.#spill = spills.spill({
      written: () => this.#reconsiderReading(),
      failed: (reason) => this.release(reason),
    });
    if (this.#spill === undefined) this.#spills = undefined;
    return this.#spill !== undefined;
  }

  /**
   * Makes room in the block for `bytes` more, reserving the growth first: false, holding nothing more,
   * when the account has no room for it. The block grows in place, to the size the upstream gave when it
   * fits, else doubled; it can never be larger than the account's room, nor than the memory share when
   * the rest can go to a file.
   */
  #fits(bytes: number): boolean {
    const needed = this.#filled + bytes;
    const capacity = this.#store?.byteLength ?? 0;
    if (needed <= capacity) return true;
    const share = this.#spills === undefined ? Number.POSITIVE_INFINITY : HELD_IN_MEMORY_BYTES;
    const most = Math.min(this.maxBodyBytes, this.held.room, share);
    const expected = this.expected;
    const grown =
      expected !== undefined && needed <= expected && expected <= most
        ? expected
        : Math.min(Math.max(needed, capacity * 2, FIRST_STORE_BYTES), Math.max(needed, most));
    if (!this.held.tryTake(grown - capacity)) return false;
    // Address space only, never memory: no larger than the body can be.
    const largest = expected !== undefined && expected <= most ? expected : most;
    const store = this.#store;
    if (store !== undefined && grown > store.maxByteLength) {
      // Made for the memory share, before no file could be made: moved to a block that can grow further.
      const larger = new ResizableBuffer(grown, { maxByteLength: Math.max(grown, largest) });
      new Uint8Array(larger).set(new Uint8Array(store, 0, this.#filled));
      store.resize(0);
      this.#store = larger;
      return true;
    }
    this.#store ??= new ResizableBuffer(0, { maxByteLength: Math.max(grown, largest) });
    this.#store.resize(grown);
    return true;
  }

  #keep(chunk: Buffer): void {
    if (this.#store === undefined) return;
    new Uint8Array(this.#store, this.#filled, chunk.length).set(chunk);
    this.#filled += chunk.length;
    // The chunk itself is in memory until the collector frees it: charged until then.
    this.held.letGo(chunk.length, false);
  }

  /** A chunk that came while the file is on its way to the client: it goes after it. */
  #toTail(chunk: Buffer): true {
    this.held.take(chunk.length);
    this.#tail.push(chunk);
    this.#tailBytes += chunk.length;
    return true;
  }

  /**
   * The upstream is read while nothing waits: not while the block waits for room, the file is behind, or
   * the file is on its way to the client.
   */
  #reconsiderReading(): void {
    const paused = this.#waiting || this.#replaying || (this.#spill?.backlog ?? 0) > SPILL_BACKLOG_BYTES;
    if (paused === this.#readingPaused) return;
    this.#readingPaused = paused;
    this.client.pause(paused);
  }

  /** Goes on with `chunk` the last to come: true when it waits after what was held, false when it goes as it is. */
  #goOnWith(chunk: Buffer, reason: string): boolean {
    this.#goOn(reason);
    if (this.#replaying) return this.#toTail(chunk);
    this.held.letGo(chunk.length, false);
    return false;
  }

  /**
   * The answer goes on as it comes from here, what was held first; ended here when its last byte came
   * already (the exchange, which saw it held then, left the end to it).
   */
  #goOn(reason: string): void {
    this.#holding = false;
    this.unheld = reason;
    this.room.forget(this);
    this.client.start();
    this.#waiting = false;
    this.#sendHeld(() => {
      if (this.#upstreamEnded) this.client.end();
    });
  }

  /**
   * The held bytes go to the client (the block, what waited for room, then the file, then what came
   * meanwhile), and reading goes on; then `after`.
   */
  #sendHeld(after: () => void): void {
    this.#writeHeld();
    const spill = this.#spill;
    if (spill === undefined) {
      this.#reconsiderReading();
      after();
      return;
    }
    this.#replaying = true;
    this.#reconsiderReading();
    spill.replay({ write: (chunk, charged, flushed) => this.#write(chunk, charged, flushed) }, (error) => {
      this.#replaying = false;
      this.#spill = undefined;
      for (const chunk of this.#tail) this.#write(chunk, chunk.length);
      this.#tail.length = 0;
      this.#tailBytes = 0;
      if (error !== undefined) {
        this.client.cut();
        return;
      }
      this.#reconsiderReading();
      after();
    });
  }

  /** The held bytes go to the client, their charge with them until its connection took each. */
  #writeHeld(): void {
    const store = this.#store;
    // The block's pages go back once the connection took its bytes (never before: the socket reads them).
    if (store !== undefined)
      this.#write(Buffer.from(store, 0, this.#filled), store.byteLength, () => store.resize(0), true);
    for (const chunk of this.#pending) this.#write(chunk, chunk.length);
    this.#store = undefined;
    this.#filled = 0;
    this.#pending.length = 0;
    this.#pendingBytes = 0;
  }

  /**
   * Writes `bytes`, charged at `charged` until the client's connection took them (then until the collector
   * freed them, unless `freedAtOnce`: `done` frees them); then `done`.
   */
  #write(bytes: Buffer, charged: number, done?: () => void, freedAtOnce = false): void {
    if (this.#closed) {
      this.#giveBackWritten(charged, freedAtOnce);
      done?.();
      return;
    }
    this.#flushing += charged;
    if (bytes.length === 0) {
      this.#flushed(charged, freedAtOnce);
      done?.();
    } else
      this.client.write(bytes, () => {
        this.#flushed(charged, freedAtOnce);
        done?.();
      });
  }

  #flushed(bytes: number, freedAtOnce: boolean): void {
    if (this.#closed) return;
    this.#flushing -= bytes;
    this.#giveBackWritten(bytes, freedAtOnce);
  }

  #giveBackWritten(bytes: number, freedAtOnce: boolean): void {
    if (freedAtOnce) this.held.give(bytes);
    else this.held.letGo(bytes);
  }
}

/**
 * The held answers of one proxy, and the room they wait for: those waiting are tried again as the account
 * goes down. When every held answer still being read waits for room, none waits for its verdict and the
 * account has not gone down for a while, no progress is possible: the one holding the most goes on to its
 * client, not judged whole, and its block goes back. A wait never becomes a deadlock.
 */
export class HeldRoom {
  readonly #reading = new Set<HeldAnswer>();
  readonly #waiting = new Set<HeldAnswer>();
  readonly #judging = new Set<HeldAnswer>();
  #timer: NodeJS.Timeout | undefined;
  #lastHeld = 0;
  #stuckPolls = 0;

  constructor(
    readonly held: MemoryBudget,
    readonly names: SettingNames,
  ) {}

  reading(answer: HeldAnswer): void {
    this.#reading.add(answer);
  }

  wait(answer: HeldAnswer): void {
    this.#waiting.add(answer);
    this.#timer ??= setInterval(() => this.#poll(), ROOM_POLL_MS).unref();
  }

  judging(answer: HeldAnswer): void {
    this.#reading.delete(answer);
    this.#waiting.delete(answer);
    this.#judging.add(answer);
  }

  forget(answer: HeldAnswer): void {
    this.#reading.delete(answer);
    this.#waiting.delete(answer);
    this.#judging.delete(answer);
    if (this.#waiting.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stuckPolls = 0;
  }

  #poll(): void {
    for (const answer of [...this.#waiting]) if (answer.retry()) this.#waiting.delete(answer);
    if (this.#waiting.size === 0) {
      this.stop();
      return;
    }
    const held = this.held.held;
    const stuck =
      this.#judging.size === 0 && this.#waiting.size === this.#reading.size && held >= this.#lastHeld;
    this.#lastHeld = held;
    this.#stuckPolls = stuck ? this.#stuckPolls + 1 : 0;
    if (this.#stuckPolls < STUCK_POLLS) return;
    this.#stuckPolls = 0;
    let most: HeldAnswer | undefined;
    for (const answer of this.#waiting) if (most === undefined || answer.holds > most.holds) most = answer;
    most?.release(this.#overBudget());
  }

  #overBudget(): string {
    return `the proxy held ${formatBytes(this.held.limit)} of answers in flight together (${this.names.maxMemory}), each waiting for room: this one, holding the most, went on to its client before it was judged`;
  }
}

/** Whether a list's verdict found nothing to fail it for. */
function foundNothing(verdict: ListVerdict): boolean {
  return (
    verdict.syntax === undefined &&
    verdict.limit === undefined &&
    verdict.notArray === undefined &&
    verdict.unindexed === 0 &&
    verdict.invalid.count === 0 &&
    verdict.duplicates.count === 0 &&
    verdict.exposingStatus.count === 0
  );
}

/** The held answer's tap on an exchange (--errors): the answer's bytes kept from the client until judged. */
export class HeldAnswerTap implements ExchangeTap {
  #answer: HeldAnswer | undefined;
  #head: UpstreamHead | undefined;

  constructor(
    readonly exchange: Exchange,
    readonly held: MemoryBudget,
    readonly maxBodyBytes: number,
    readonly names: SettingNames,
    readonly room: HeldRoom,
    readonly spills?: SpillFolder,
  ) {}

  /** Whether this tap writes the answer to the client: while it is held, and while its file is on its way. */
  get holding(): boolean {
    return this.#answer?.sending ?? false;
  }

  /** Whether the answer is held for its verdict, so that its judge may pace the upstream. */
  get awaitingVerdict(): boolean {
    return this.#answer?.holding ?? false;
  }

  onUpstreamHead(head: UpstreamHead): void {
    const { status, statusText, headers, incoming } = head;
    const { exchange } = this;
    const { response } = exchange;
    this.#head = head;
    const length = incoming.headers["content-length"];
    const expected = length !== undefined && /^\d{1,15}$/.test(length) ? Number(length) : undefined;
    const answer = new HeldAnswer(
      true,
      this.held,
      this.maxBodyBytes,
      this.names,
      {
        start: () => response.writeHead(status, statusText, headers),
        write: (chunk, flushed) => response.write(chunk, flushed),
        end: () => response.end(),
        cut: () => response.destroy(),
        pause: (paused) => exchange.pause("room", paused),
      },
      this.room,
      expected,
      this.spills,
    );
    this.#answer = answer;
    response.once(
      "close",
      this.exchange.guard(() => answer.closed()),
    );
  }

  onData(chunk: Buffer, size: number): boolean {
    return this.#answer?.take(chunk, size) ?? false;
  }

  onUpstreamEnd(): void {
    this.#answer?.upstreamEnded();
  }

  /**
   * The list is judged in part: when nothing was found in what was judged, the rest will not be judged
   * and nothing can come of holding it, so it goes on at once and its room goes to the answers waiting.
   */
  judgedInPart(verdict: ListVerdict): void {
    this.exchange.guard(() => {
      if (foundNothing(verdict))
        this.#answer?.judgedShort(
          "its list was judged in part and nothing was found in what was judged: there was nothing to replace it for",
        );
    })();
  }

  onEnd(end: ExchangeEnd): void {
    const answer = this.#answer;
    const head = this.#head;
    if (answer === undefined || head === undefined) return;
    if (answer.holding) {
      answer.ended();
      end.reply = this.#reply(answer, head.incoming);
    }
    if (answer.unheld !== undefined) end.unheld = answer.unheld;
  }

  onRelease(): void {
    this.#answer?.giveBack();
  }

  #reply(answer: HeldAnswer, incoming: IncomingMessage): HeldReply {
    const { response } = this.exchange;
    return {
      // Passed on as it came: its block stays in the account until the client's connection took it,
      // however slowly it reads.
      pass: () => answer.pass(),
      replace: (status, record) => {
        // One that went on already cannot be replaced: the report counts it as passed on unreplaced.
        if (answer.letGo()) sendError(response, status, record, upstreamCors(incoming));
      },
      fail: () => {
        if (!response.headersSent)
          sendError(response, 502, { code: "proxy_fault", message: "the proxy failed" });
        else response.destroy();
      },
    };
  }
}
