import { formatBytes } from "../../common/byte-size.ts";
import { utf8Problem } from "../../common/utf8-stream.ts";
import { EXCERPT_CHARS, type Exchange, type ExchangeResponse } from "../judging/exchange.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import { judgeFault } from "../judging/list-judge.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";
import { DecoderChain, type DecoderRoom, readCodings, unreadCoding } from "./content-coding.ts";

/**
 * Bytes of an answer kept when it is not a list judged as it streams: an Error record or an empty body needs
 * far less, and this bounds what every request in flight can hold together.
 */
export const WHOLE_ANSWER_BYTES = 1024 * 1024;
/** Why an answer that is no list is read only in its start, in the words of the suite and the proxy alike. */
export const PAST_WHOLE_ANSWER = `the body is larger than the ${formatBytes(WHOLE_ANSWER_BYTES)} read of an answer that is not a list`;
// Kept of a judged list for reports: enough for the excerpt, whatever its characters' width.
const EXCERPT_BYTES = EXCERPT_CHARS * 4;

const NO_CODINGS = { codings: [] };

/**
 * Why a BodyReader read no more: past --max-body, an answer that is no list past WHOLE_ANSWER_BYTES (its
 * start kept, to judge what it proves), a list that cannot be judged, or a body this tool cannot read (a
 * coding it does not know, decoders past their room), which says nothing of the target.
 */
export type ReadingStop = "max-body" | "not-a-list" | { unjudgeable: string } | { notRead: string };

/** The run's own limit a stop is, which reading the same answer again would meet again; none for the target's faults. */
export function runLimitOf(stop: ReadingStop): Exchange["limit"] {
  if (stop === "max-body") return "max-body";
  return typeof stop === "object" && "notRead" in stop ? "not-read" : undefined;
}

/** What a BodyReader tells the client reading the answer. */
export interface BodyReading {
  /** Nothing more is read, and the answer is what was read, cut for this reason: said once at most. */
  stopped(stop: ReadingStop): void;
  /** The decoders are behind: stop reading the connection (true) until they caught up (false). */
  pause(paused: boolean): void;
  /** What the decoders' state is reserved from, shared by the client's answers in flight. */
  decoderRoom?: DecoderRoom;
}

/**
 * One body as it arrives, whichever client reads it: decoded from its Content-Encoding as it comes, then
 * kept as chunks, or streamed into a list judge keeping only its start, and never past the limit, which
 * bounds the decoded bytes (a few kilobytes of a compressed body can decode to any number).
 */
export class BodyReader {
  /** Bytes of the body as they came, coded or not. */
  bytes = 0;
  /** Bytes of the body as read, decoded from its Content-Encoding. */
  decoded = 0;
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  readonly #codings: ReturnType<typeof readCodings>;
  #decoder: DecoderChain | undefined;
  #stop: ReadingStop | undefined;
  /** The connection is paused until the decoders take in what they were given. */
  #waiting = false;

  constructor(
    private readonly limit: number,
    private readonly judge: ListReading | undefined,
    contentEncoding: string | undefined,
    private readonly reading: BodyReading,
  ) {
    this.#codings = contentEncoding === undefined ? NO_CODINGS : readCodings(contentEncoding);
  }

  /** Whether the body has a Content-Encoding that is decoded (or would be, were it read). */
  get coded(): boolean {
    return !("codings" in this.#codings) || this.#codings.codings.length > 0;
  }

  /** A chunk as it came; an empty body is empty whatever its Content-Encoding says. */
  add(chunk: Buffer): void {
    if (this.#stop !== undefined) return;
    this.bytes += chunk.length;
    if (!("codings" in this.#codings)) {
      const { unread } = this.#codings;
      this.#stopWith({
        notRead: `${unreadCoding(unread)}, so the body could not be read`,
      });
      return;
    }
    if (this.#codings.codings.length === 0) {
      this.#take(chunk);
      return;
    }
    this.#decoder ??= new DecoderChain(
      this.#codings.codings,
      {
        data: (decoded) => this.#take(decoded),
        failed: ({ coding, reason }) =>
          this.#stopWith({ unjudgeable: `${coding} body is corrupt: ${reason}` }),
        overBudget: (why) => this.#stopWith({ notRead: `the body could not be read: ${why}` }),
      },
      this.reading.decoderRoom,
    );
    // A chunk or two may still come after the connection is paused: one wait for the decoders is enough.
    if (!this.#decoder.write(chunk) && !this.#waiting) {
      this.#waiting = true;
      this.reading.pause(true);
      this.#decoder.drained(() => {
        this.#waiting = false;
        this.reading.pause(false);
      });
    }
  }

  /**
   * The last byte came: `then` once it is decoded (a stop it brings is said first); at once for a body in
   * no coding, as most are.
   */
  ended(then: () => void): void {
    if (this.#decoder === undefined || this.#stop !== undefined) then();
    else void this.#decoder.end().then(then);
  }

  #take(chunk: Buffer): void {
    if (this.#stop !== undefined) return;
    this.decoded += chunk.length;
    const stop = this.#stopAt(chunk);
    if (stop !== undefined) {
      // What fits of the chunk completes the start an answer that is no list is judged on.
      if (stop === "not-a-list") this.#chunks.push(chunk.subarray(0, WHOLE_ANSWER_BYTES - this.#kept));
      this.#stopWith(stop);
      return;
    }
    if (this.judge === undefined) {
      this.#chunks.push(chunk);
      this.#kept += chunk.length;
      return;
    }
    if (this.#kept < EXCERPT_BYTES) {
      const part = chunk.subarray(0, EXCERPT_BYTES - this.#kept);
      this.#chunks.push(part);
      this.#kept += part.length;
    }
  }

  /** Why the reading stops at this decoded chunk: past a limit, or a list that cannot be judged. */
  #stopAt(chunk: Buffer): ReadingStop | undefined {
    if (this.decoded > this.limit) return "max-body";
    if (this.judge === undefined) return this.decoded > WHOLE_ANSWER_BYTES ? "not-a-list" : undefined;
    try {
      this.judge.write(chunk);
    } catch (error) {
      // A fault met on this answer only: it fails this request, not the run.
      return { unjudgeable: judgeFault(error) };
    }
    return undefined;
  }

  #stopWith(stop: ReadingStop): void {
    this.#stop = stop;
    this.#decoder?.destroy();
    this.reading.stopped(stop);
  }

  /** Why the reading stopped, in the words of the run's settings. */
  stopReason(stop: ReadingStop, limits: { maxBodyBytes: number; names: SettingNames }): string {
    const { maxBodyBytes, names } = limits;
    const codings = "codings" in this.#codings ? this.#codings.codings.join(", ") : "";
    const decoding = this.coded ? ` after decoding its Content-Encoding (${codings})` : "";
    const at = this.coded
      ? `${this.decoded} decoded bytes, ${this.bytes} as they came`
      : `${this.bytes} bytes`;
    if (stop === "max-body")
      return `the body is larger than the ${formatBytes(maxBodyBytes)} ${names.maxBody} allows${decoding} (stopped reading at ${at}); raise ${names.maxBody} to judge it`;
    if (stop === "not-a-list") return `${PAST_WHOLE_ANSWER}${decoding} (stopped reading at ${at})`;
    return "notRead" in stop ? stop.notRead : stop.unjudgeable;
  }

  response(status: number, headers: Record<string, string>, cut: string | undefined): ExchangeResponse {
    if (cut !== undefined) this.#decoder?.destroy();
    const bytes = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    const startOnly = this.#stop === "not-a-list";
    const notText = this.judge || startOnly ? undefined : utf8Problem(bytes);
    const response: ExchangeResponse = {
      status,
      headers,
      body: bytes.toString("utf8"),
      received: this.decoded,
      ...(notText !== undefined ? { notUtf8: notText } : {}),
      // The start's bytes, for the checks to read as they came: a character may be cut at its end.
      ...(startOnly ? { startOnly, bodyBytes: bytes } : {}),
    };
    if (cut !== undefined) {
      response.cut = cut;
      this.judge?.abandon();
    } else if (this.judge) {
      try {
        response.list = this.judge.end();
      } catch (error) {
        response.cut = judgeFault(error);
      }
    }
    return response;
  }
}

/** A request the client refused to send, failed with its reason on one line. */
export function unsent(recorded: RecordedRequest, error: unknown): Exchange {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = error instanceof Error ? oneLine(error.message) : String(error);
  return {
    request: recorded,
    error: `the request could not be sent: ${reason}`,
    ...(typeof code === "string" ? { errorCode: code } : {}),
  };
}

export function cutShort(received: number, contentLength: string | undefined, reason: string): string {
  const expected = contentLength !== undefined ? ` of the ${contentLength} its Content-Length announced` : "";
  return `the body broke off after ${received} bytes${expected} (${reason}); a cut body is not judged`;
}

export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ").trim();
}
