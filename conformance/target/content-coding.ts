import type { Duplex } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate, type Zlib } from "node:zlib";
import { formatBytes } from "../../common/byte-size.ts";

/** The content codings read, by their names in a Content-Encoding (lower case). */
const DECODERS: Readonly<Record<string, () => Duplex & Zlib>> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** The codings read, as messages list them. */
const READ_CODINGS = "gzip, x-gzip, deflate, br";

/**
 * The most codings read in a row, as curl reads them: a body is rarely coded twice, and a chain of
 * thousands would cost a decoder each before one byte is read.
 */
export const MOST_CODINGS = 5;

/** What a Content-Encoding names that is not read: a coding, or more codings than are read in a row. */
export type UnreadCoding = { coding: string } | { tooMany: true };

/** Why a body in a coding not read says nothing: named with the codings that are. */
export function unreadCoding(unread: UnreadCoding): string {
  if ("tooMany" in unread)
    return `Content-Encoding names more than ${MOST_CODINGS} codings in a row, more than petstore-conformance reads (as curl)`;
  return `Content-Encoding "${unread.coding}" is not one petstore-conformance reads (${READ_CODINGS})`;
}

/**
 * A Content-Encoding read: the codings in the order they were applied (RFC 9110 §8.4: `gzip, br` is br of
 * gzip), `identity` left out, so none for a body as it is; or the first coding not read. Read no further
 * than one coding past the most read, so that what it costs is bounded by them, not by the header.
 */
export function readCodings(
  contentEncoding: string | undefined,
): { codings: string[] } | { unread: UnreadCoding } {
  const text = contentEncoding ?? "";
  const codings: string[] = [];
  let from = 0;
  while (from <= text.length) {
    const comma = text.indexOf(",", from);
    const to = comma === -1 ? text.length : comma;
    const coding = text.slice(from, to).trim().toLowerCase();
    from = to + 1;
    if (coding === "" || coding === "identity") continue;
    if (!Object.hasOwn(DECODERS, coding)) return { unread: { coding } };
    if (codings.length === MOST_CODINGS) return { unread: { tooMany: true } };
    codings.push(coding);
  }
  return { codings };
}

/** Why a body is not what its Content-Encoding says. */
export interface CodingFailure {
  /** The coding whose data failed. */
  coding: string;
  /** Its decoder's words, or the bytes left after its end. */
  reason: string;
  /** Found at the end: bytes after the end of a coding's data, which its decoder left unread. */
  trailing: boolean;
}

export interface DecodedEvents {
  /** Decoded bytes, in order. */
  data(chunk: Buffer): void;
  /** The body does not decode: called once, and nothing more comes. */
  failed(failure: CodingFailure): void;
  /** The decoders' state would not fit in the account: called once, and nothing more comes. */
  overBudget?(why: string): void;
}

/** An account the decoders' state is reserved from before it is allocated, and given back to at the end. */
export interface DecoderRoom {
  tryTake(bytes: number): boolean;
  give(bytes: number): void;
}

/**
 * What one client's answers in flight may hold of decoders' state together: a few brotli windows of the
 * largest size, or a thousand zlib decoders. Past it an answer is said not read, never judged.
 */
export const CLIENT_DECODERS_ROOM_BYTES = 64 * 1024 * 1024;

/** What a zlib decoder holds: its 32 KiB window, its state and its output buffer, with room to spare. */
const ZLIB_STATE_BYTES = 64 * 1024;
/** The largest window a brotli stream may ask for (RFC 7932 §9.2: WBITS 24; Node refuses larger ones). */
const BROTLI_LARGEST_WINDOW_BITS = 24;

/**
 * The window a brotli stream asks for, read from its first byte (RFC 7932 §9.2, bits from the lowest): the
 * decoder's ring buffer grows to it. Unknown (no byte yet, or a large window): the largest.
 */
export function brotliWindowBits(firstByte: number | undefined): number {
  if (firstByte === undefined) return BROTLI_LARGEST_WINDOW_BITS;
  if ((firstByte & 1) === 0) return 16;
  const n = (firstByte >> 1) & 7;
  if (n !== 0) return 17 + n;
  const m = (firstByte >> 4) & 7;
  if (m === 1) return BROTLI_LARGEST_WINDOW_BITS;
  return m === 0 ? 17 : 8 + m;
}

/** What a decoder of `coding` may hold at most, given its first coded byte when it is known. */
export function decoderStateBytes(coding: string, firstByte?: number): number {
  return coding === "br" ? (1 << brotliWindowBits(firstByte)) + ZLIB_STATE_BYTES : ZLIB_STATE_BYTES;
}

/**
 * One body's decoders in a row, the last coding applied undone first, piped so that each waits for the
 * next: bytes go in as they come and the decoded bytes come out as events, never gathered. A decoder's
 * output is as large as its data says, so what bounds it is the reader's: it destroys the chain once it
 * has read enough. A coding's data followed by more bytes is no body of that coding (brotli and deflate
 * end without complaint where their data does; gzip fails on them itself), as curl reads it.
 */
export class DecoderChain {
  readonly #codings: readonly string[];
  readonly #decoders: ReadonlyArray<Duplex & Zlib>;
  /** Bytes given to each decoder. */
  readonly #given: number[];
  #stopped = false;
  readonly #ended: Promise<void>;
  #settle: () => void = () => {};
  /** What the decoders' state holds of the room, given back when the chain stops. */
  #reserved = 0;
  /** The first decoder's state is reserved at its first byte, which says how large it may grow. */
  #firstReserved = false;

  /**
   * `codings` as readCodings gives them: one at least, each one read. With a room, every decoder's state is
   * reserved from it before the decoder takes a byte: at once for those whose first bytes come from another
   * decoder, as large as they may grow.
   */
  constructor(
    codings: readonly string[],
    private readonly events: DecodedEvents,
    private readonly room?: DecoderRoom,
  ) {
    // Each coding costs a decoder at once: readCodings never gives more, and no other caller may.
    if (codings.length > MOST_CODINGS) throw new RangeError(`more than ${MOST_CODINGS} codings in a row`);
    this.#codings = [...codings].reverse();
    this.#decoders = this.#codings.map((coding) => (DECODERS[coding] as () => Duplex & Zlib)());
    this.#given = this.#decoders.map(() => 0);
    this.#ended = new Promise((resolve) => {
      this.#settle = resolve;
    });
    this.#decoders.forEach((decoder, at) => {
      // Listened to from the start: a body that stops decoding half-way must never be an uncaught error.
      decoder.on("error", (error: Error) =>
        this.#fail({ coding: this.#codings[at] as string, reason: error.message, trailing: false }),
      );
      const next = this.#decoders[at + 1];
      if (next === undefined) return;
      decoder.on("data", (chunk: Buffer) => {
        this.#given[at + 1] = (this.#given[at + 1] as number) + chunk.length;
      });
      decoder.pipe(next);
    });
    const last = this.#decoders[this.#decoders.length - 1] as Duplex;
    last.on("data", (chunk: Buffer) => {
      if (!this.#stopped) events.data(chunk);
    });
    last.once("end", () => this.#endedWhole());
  }

  /** Coded bytes in; false when the first decoder holds enough and `drained` should be awaited. */
  write(raw: Buffer): boolean {
    if (this.#stopped || raw.length === 0) return true;
    if (!this.#firstReserved) {
      this.#firstReserved = true;
      if (!this.#reserveAll(raw[0] as number)) return true;
    }
    this.#given[0] = (this.#given[0] as number) + raw.length;
    return (this.#decoders[0] as Duplex).write(raw);
  }

  /** Once the first decoder took in what it held. */
  drained(then: () => void): void {
    (this.#decoders[0] as Duplex).once("drain", then);
  }

  /** No more coded bytes: settles once the last is decoded, or the chain stopped. */
  end(): Promise<void> {
    if (!this.#stopped) (this.#decoders[0] as Duplex).end();
    return this.#ended;
  }

  /** Decoded bytes wait (true) or flow again (false); the decoders before wait in turn as they fill. */
  pause(paused: boolean): void {
    const last = this.#decoders[this.#decoders.length - 1] as Duplex;
    if (paused) last.pause();
    else last.resume();
  }

  /** Nothing more is decoded: the reader has what it wants, or gave up on the body. */
  destroy(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const decoder of this.#decoders) decoder.destroy();
    if (this.#reserved > 0) this.room?.give(this.#reserved);
    this.#reserved = 0;
    this.#settle();
  }

  /** Reserves every decoder's state, the first's sized by its first byte; false, stopped, when it does not fit. */
  #reserveAll(firstByte: number): boolean {
    if (this.room === undefined) return true;
    const wanted = this.#codings.reduce(
      (total, coding, at) => total + decoderStateBytes(coding, at === 0 ? firstByte : undefined),
      0,
    );
    if (this.room.tryTake(wanted)) {
      this.#reserved = wanted;
      return true;
    }
    this.destroy();
    this.events.overBudget?.(
      `decoding its Content-Encoding (${[...this.#codings].reverse().join(", ")}) needs ${formatBytes(wanted)} more than the account has left`,
    );
    return false;
  }

  #endedWhole(): void {
    if (this.#stopped) return;
    this.#decoders.forEach((decoder, at) => {
      const unread = (this.#given[at] as number) - decoder.bytesWritten;
      if (unread > 0 && !this.#stopped)
        this.#fail({
          coding: this.#codings[at] as string,
          reason: `${unread} bytes after the end of its coded data`,
          trailing: true,
        });
    });
    this.destroy();
  }

  #fail(failure: CodingFailure): void {
    if (this.#stopped) return;
    this.destroy();
    this.events.failed(failure);
  }
}
