import type { Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { formatBytes } from "../http-client.ts";
import type { ListJudge, ListVerdict } from "../list-judge.ts";

/** Bytes of a body kept whole; a list past this is judged as it streams and only its start is kept. */
export const KEPT_BYTES = 1024 * 1024;
// A streamed list is judged a few milliseconds at a time between turns of the event loop, so that every
// other exchange is served in between; past this many bytes waiting to be judged, reading from the
// upstream pauses until the judge has caught up with half of them.
const SLICE_MS = 4;
// The judge is handed this much at a time, so that a slice overruns its time by little even while the
// judge's code is still cold (its first few hundred kilobytes) and a socket's chunk takes longer than that.
const PIECE_BYTES = 16 * 1024;
const BACKLOG_BYTES = 8 * 1024 * 1024;

export interface BodyOutcome {
  /** The body decoded from any Content-Encoding: whole, or its first KEPT_BYTES when `whole` is false. */
  decoded: Buffer;
  whole: boolean;
  /** Decoded bytes in all. */
  received: number;
  /** A list judged order by order as it streamed. */
  list?: ListVerdict;
  /** Why the body is not judged: past --max-body. */
  notJudged?: string;
  /** Why the body cannot be read: a Content-Encoding that does not decode. */
  undecodable?: string;
}

/**
 * What the proxy keeps of one answer's body while forwarding it: every chunk is decoded as a stream (its
 * output bounded by --max-body, so a compression bomb costs nothing) and kept up to KEPT_BYTES; a list
 * past that is handed to the streaming judge chunk by chunk in short slices between turns of the event
 * loop, so no exchange waits for another's judgement and no list is held whole. Small bodies are judged
 * after they end, as before.
 */
export class ForwardedBody {
  readonly #chunks: Buffer[] = [];
  // Chunks waiting for the judge, and whether the upstream was asked to pause for them.
  readonly #waiting: Buffer[] = [];
  #waitingBytes = 0;
  #holding = false;
  #judging = false;
  #caughtUp: (() => void) | undefined;
  #kept = 0;
  #received = 0;
  #judge: ListJudge | undefined;
  #notJudged: string | undefined;
  #undecodable: string | undefined;
  readonly #decoder: Transform | undefined;
  #ended: Promise<void> | undefined;

  constructor(
    private readonly maxBytes: number,
    contentEncoding: string | undefined,
    /** For a list: the judge to stream into once the body outgrows what is kept. */
    private readonly listJudge: (() => ListJudge) | undefined,
    /** Keep the whole body (answers held until judged): bounded by maxBytes only. */
    private readonly keepWhole: boolean,
    /** Asked to pause reading from the upstream (true) while the judge catches up, and to go on (false). */
    private readonly hold: (paused: boolean) => void = () => {},
  ) {
    this.#decoder = decoderFor(contentEncoding);
    this.#decoder?.on("data", (chunk: Buffer) => this.#take(chunk));
  }

  add(raw: Buffer): void {
    if (this.#notJudged !== undefined || this.#undecodable !== undefined) return;
    if (this.#decoder) this.#decoder.write(raw);
    else this.#take(raw);
  }

  /** The body once its last byte came and was decoded. */
  async end(): Promise<BodyOutcome> {
    const decoder = this.#decoder;
    if (decoder && this.#notJudged === undefined) {
      this.#ended ??= new Promise<void>((resolve) => {
        decoder.once("end", resolve);
        // Destroyed when its output passed the limit: it then only closes.
        decoder.once("close", resolve);
        decoder.once("error", (error: Error) => {
          this.#undecodable = `the body does not decode as its Content-Encoding says: ${error.message}`;
          resolve();
        });
        decoder.end();
      });
      await this.#ended;
    }
    if (this.#judging) await new Promise<void>((resolve) => (this.#caughtUp = resolve));
    const outcome: BodyOutcome = {
      decoded: this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks),
      whole: this.#judge === undefined && this.#notJudged === undefined,
      received: this.#received,
    };
    if (this.#notJudged !== undefined) outcome.notJudged = this.#notJudged;
    else if (this.#undecodable !== undefined) outcome.undecodable = this.#undecodable;
    else if (this.#judge) outcome.list = this.#judge.end();
    return outcome;
  }

  #take(chunk: Buffer): void {
    if (this.#notJudged !== undefined) return;
    this.#received += chunk.length;
    if (this.#received > this.maxBytes) {
      this.#notJudged = `the body is larger than the ${formatBytes(this.maxBytes)} --max-body allows: forwarded unchanged, not judged`;
      this.#judge = undefined;
      this.#decoder?.destroy();
      return;
    }
    if (this.#judge) {
      this.#toJudge(chunk);
      this.#keepStart(chunk);
      return;
    }
    if (this.#kept + chunk.length > KEPT_BYTES && this.listJudge && !this.keepWhole) {
      // Too big to keep: what was kept goes to the judge first, then every chunk as it comes.
      this.#judge = this.listJudge();
      for (const kept of this.#chunks) this.#toJudge(kept);
      this.#toJudge(chunk);
      this.#keepStart(chunk);
      return;
    }
    this.#chunks.push(chunk);
    this.#kept += chunk.length;
  }

  #toJudge(chunk: Buffer): void {
    this.#waiting.push(chunk);
    this.#waitingBytes += chunk.length;
    if (!this.#holding && this.#waitingBytes > BACKLOG_BYTES) {
      this.#holding = true;
      this.hold(true);
    }
    if (!this.#judging) {
      this.#judging = true;
      setImmediate(this.#judgeSlice);
    }
  }

  readonly #judgeSlice = () => {
    const started = performance.now();
    while (this.#waiting.length > 0 && performance.now() - started < SLICE_MS) {
      let piece = this.#waiting[0] as Buffer;
      if (piece.length > PIECE_BYTES) {
        this.#waiting[0] = piece.subarray(PIECE_BYTES);
        piece = piece.subarray(0, PIECE_BYTES);
      } else this.#waiting.shift();
      this.#waitingBytes -= piece.length;
      // Past --max-body the judge was let go: what still waits is dropped.
      this.#judge?.write(piece);
    }
    if (this.#holding && this.#waitingBytes < BACKLOG_BYTES / 2) {
      this.#holding = false;
      this.hold(false);
    }
    if (this.#waiting.length > 0) {
      setImmediate(this.#judgeSlice);
      return;
    }
    this.#judging = false;
    this.#caughtUp?.();
  };

  #keepStart(chunk: Buffer): void {
    if (this.#kept >= KEPT_BYTES) return;
    const part = chunk.subarray(0, KEPT_BYTES - this.#kept);
    this.#chunks.push(part);
    this.#kept += part.length;
  }
}

function decoderFor(contentEncoding: string | undefined): Transform | undefined {
  const encoding = contentEncoding?.trim().toLowerCase();
  if (encoding === "gzip" || encoding === "x-gzip") return createGunzip();
  if (encoding === "deflate") return createInflate();
  if (encoding === "br") return createBrotliDecompress();
  return undefined;
}
