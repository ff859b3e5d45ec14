import { formatBytes } from "../../common/byte-size.ts";
import { utf8Problem } from "../../common/utf8-stream.ts";
import { EXCERPT_CHARS, type Exchange, type ExchangeResponse } from "../judging/exchange.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import { judgeFault } from "../judging/list-judge.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";

/**
 * Bytes of an answer kept when it is not a list judged as it streams: an Error record or an empty body needs
 * far less, and this bounds what every request in flight can hold together.
 */
export const WHOLE_ANSWER_BYTES = 1024 * 1024;
// Kept of a judged list for reports: enough for the excerpt, whatever its characters' width.
const EXCERPT_BYTES = EXCERPT_CHARS * 4;

/** Why a BodyReader read no more. */
export type ReadingStop = "max-body" | "not-a-list" | { unjudgeable: string };

/**
 * One body as it arrives, whichever client reads it: kept as chunks, or streamed into a list judge keeping
 * only its start, and never past the limit.
 */
export class BodyReader {
  bytes = 0;
  readonly #chunks: Buffer[] = [];
  #kept = 0;

  constructor(
    private readonly limit: number,
    private readonly judge: ListReading | undefined,
  ) {}

  /** Why nothing more is read: past a limit (--max-body, or what an answer not a list holds), or a list that cannot be judged. */
  add(chunk: Buffer): ReadingStop | undefined {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) return "max-body";
    if (this.judge === undefined) {
      if (this.bytes > WHOLE_ANSWER_BYTES) return "not-a-list";
      this.#chunks.push(chunk);
      return undefined;
    }
    try {
      this.judge.write(chunk);
    } catch (error) {
      // A fault met on this answer only: it fails this request, not the run.
      return { unjudgeable: judgeFault(error) };
    }
    if (this.#kept < EXCERPT_BYTES) {
      const part = chunk.subarray(0, EXCERPT_BYTES - this.#kept);
      this.#chunks.push(part);
      this.#kept += part.length;
    }
    return undefined;
  }

  response(status: number, headers: Record<string, string>, cut: string | undefined): ExchangeResponse {
    const bytes = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    const notText = this.judge ? undefined : utf8Problem(bytes);
    const response: ExchangeResponse = {
      status,
      headers,
      body: bytes.toString("utf8"),
      received: this.bytes,
      ...(notText !== undefined ? { notUtf8: notText } : {}),
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

/** Why the reading of an answer stopped, in the words of the run's settings. */
export function readingStopped(
  stop: ReadingStop,
  bytes: number,
  limits: { maxBodyBytes: number; names: SettingNames },
): string {
  const { maxBodyBytes, names } = limits;
  if (stop === "max-body")
    return `the body is larger than the ${formatBytes(maxBodyBytes)} ${names.maxBody} allows (stopped reading at ${bytes} bytes); raise ${names.maxBody} to judge it`;
  if (stop === "not-a-list")
    return `the body is larger than ${formatBytes(WHOLE_ANSWER_BYTES)}, more than any answer but a list of orders needs (stopped reading at ${bytes} bytes)`;
  return stop.unjudgeable;
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
