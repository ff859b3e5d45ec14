import type { Duplex } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate, type Zlib } from "node:zlib";

/** The content codings read, by their names in a Content-Encoding (lower case). */
const DECODERS: Readonly<Record<string, () => Duplex & Zlib>> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** The codings read, as messages list them. */
export const READ_CODINGS = "gzip, x-gzip, deflate, br";

/**
 * A Content-Encoding read: the codings in the order they were applied (RFC 9110 §8.4: `gzip, br` is br of
 * gzip), `identity` left out, so none for a body as it is; or the first coding not read.
 */
export function readCodings(contentEncoding: string | undefined): { codings: string[] } | { unread: string } {
  const codings = (contentEncoding ?? "")
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  const unread = codings.find((coding) => !(coding in DECODERS));
  return unread === undefined ? { codings } : { unread };
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

  /** `codings` as readCodings gives them: one at least, each one read. */
  constructor(
    codings: readonly string[],
    private readonly events: DecodedEvents,
  ) {
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
    if (this.#stopped) return true;
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
    this.#settle();
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
