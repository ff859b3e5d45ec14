import type { Agent, ClientRequest, IncomingMessage, RequestOptions } from "node:http";
import type { RequestOptions as HttpsRequestOptions } from "node:https";
import { formatBytes } from "../../common/byte-size.ts";
import { utf8Problem } from "../../common/utf8-stream.ts";
import { EXCERPT_CHARS, type Exchange, type ExchangeResponse } from "../judging/exchange.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import { judgeFault } from "../judging/list-judge.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";
import { type StartGate, whenConnected } from "./start-gate.ts";

/**
 * Bytes of an answer kept when it is not a list judged as it streams: an Error record or an empty body needs
 * far less, and this bounds what every request in flight can hold together.
 */
export const WHOLE_ANSWER_BYTES = 1024 * 1024;
// Kept of a judged list for reports: enough for the excerpt, whatever its characters' width.
const EXCERPT_BYTES = EXCERPT_CHARS * 4;
// A reused keep-alive connection the server had already closed: the request never reached it.
const STALE_CONNECTION = new Set(["ECONNRESET", "EPIPE"]);

/** One request as it is sent, and sent again after a 429 or on a fresh connection. */
export interface RequestToSend {
  method: string;
  fullPath: string;
  headers: Record<string, string>;
  recorded: RecordedRequest;
  /** For a 200 answer: a judge its body streams into, instead of being kept. */
  listJudge: (() => ListReading) | undefined;
}

/** Where and within which limits every attempt of a client goes. */
export interface AttemptTarget {
  url: URL;
  /** The URL's host name as sockets take it. */
  hostname: string;
  /** Options every request to the target carries (its TLS settings). */
  requestOptions: HttpsRequestOptions;
  /** Without a byte from the target. */
  timeoutMs: number;
  /** For the whole request, headers and body. */
  deadlineMs: number;
  maxBodyBytes: number;
  names: SettingNames;
  /** Sends a request: looked up at each call, so that in-process interceptors that replace it see it. */
  request(options: RequestOptions, onAnswer: (incoming: IncomingMessage) => void): ClientRequest;
}

/**
 * One request sent once: it ends in one answer (whole, or cut with the reason) or one failure, and is never
 * sent again here; whether to send it again is the retry policy's to say.
 */
export class HttpAttempt {
  /** Settles once, with the answer or the failure. */
  readonly exchange: Promise<Exchange>;
  #settle: (exchange: Exchange) => void = () => {};
  #settled = false;
  #outgoing: ClientRequest | undefined;
  #answered = false;
  #proxyRefused: number | undefined;
  #sentAt: number | undefined;
  #atGate = false;
  // Before the answer: the request fails; once it is coming: what came is judged as cut.
  #limit: Exchange["limit"];
  readonly #deadline: NodeJS.Timeout;
  #onDeadline: (ms: number) => void = (ms) => {
    this.#limit = "deadline";
    this.#outgoing?.destroy(
      new Error(`no complete answer within the ${ms} ms ${this.target.names.deadline}`),
    );
  };

  constructor(
    private readonly target: AttemptTarget,
    private readonly request: RequestToSend,
    through: Agent,
    /** Sent with a burst: its bytes wait until every connection of the burst is open. */
    private readonly gate?: StartGate,
  ) {
    this.exchange = new Promise((resolve) => {
      this.#settle = resolve;
    });
    const { deadlineMs } = target;
    this.#deadline = setTimeout(() => this.#onDeadline(deadlineMs), deadlineMs);
    this.#send(through);
  }

  #send(through: Agent): void {
    const { target, request } = this;
    const options: HttpsRequestOptions = {
      agent: through,
      method: request.method,
      protocol: target.url.protocol,
      hostname: target.hostname,
      port: target.url.port,
      path: request.fullPath,
      headers: request.headers,
      timeout: target.timeoutMs,
      ...target.requestOptions,
    };
    let outgoing: ClientRequest;
    try {
      outgoing = target.request(options, (incoming) => this.#onAnswer(incoming));
    } catch (error) {
      // What http.request refuses to send (a header with CR LF, a bad method) it throws at once: the
      // request fails with one line, its deadline cleared, rather than leaving the timer to fire.
      this.#finish(unsent(request.recorded, error));
      return;
    }
    this.#outgoing = outgoing;
    // https-proxy-agent hands a refused tunnel back as the proxy's own answer; it must not pass for the target's.
    outgoing.on("proxyConnect", (connect: { statusCode: number }) => {
      if (connect.statusCode !== 200) this.#proxyRefused = connect.statusCode;
    });
    outgoing.on("finish", () => {
      this.#sentAt = performance.now();
    });
    outgoing.on("timeout", () => outgoing.destroy(new Error(`no response within ${target.timeoutMs} ms`)));
    outgoing.on("error", (error: NodeJS.ErrnoException) => this.#onRequestError(error, outgoing));
    if (this.gate === undefined) outgoing.end();
    else this.#sendAtGate(outgoing, this.gate);
  }

  /** Arrives once its connection is open; sends when the gate opens, whether it arrived or not. */
  #sendAtGate(outgoing: ClientRequest, gate: StartGate): void {
    outgoing.once("socket", (socket) => whenConnected(socket, () => this.#arriveAtGate()));
    void gate.opened.then(() => {
      if (!this.#settled) outgoing.end();
    });
  }

  /** Once: connected, or settled without ever connecting (so that the burst does not wait for it). */
  #arriveAtGate(): void {
    if (this.gate === undefined || this.#atGate) return;
    this.#atGate = true;
    this.gate.arrive();
  }

  /** No answer came: the failure, and whether it was a kept-alive connection the server had closed. */
  #onRequestError(error: NodeJS.ErrnoException, outgoing: ClientRequest): void {
    if (this.#answered) return;
    const stale = outgoing.reusedSocket && STALE_CONNECTION.has(error.code ?? "");
    this.#finish({
      request: this.request.recorded,
      error: error.code ? `${error.code}: ${error.message}` : error.message,
      ...(error.code ? { errorCode: error.code } : {}),
      ...(stale ? { staleConnection: true } : {}),
      ...(this.#limit !== undefined ? { limit: this.#limit } : {}),
    });
  }

  #onAnswer(incoming: IncomingMessage): void {
    this.#answered = true;
    const status = incoming.statusCode ?? 0;
    const judge = status === 200 ? this.request.listJudge?.() : undefined;
    const reader = new BodyReader(this.target.maxBodyBytes, judge);
    const answer = (cut?: string) => {
      if (this.#settled) return;
      this.#finish({
        request: this.request.recorded,
        response: reader.response(status, flattenHeaders(incoming.headers), cut),
        ...(this.#proxyRefused !== undefined ? { proxyRefused: this.#proxyRefused } : {}),
        ...(this.#sentAt !== undefined ? { sentAt: this.#sentAt } : {}),
        ...(this.#limit !== undefined ? { limit: this.#limit } : {}),
      });
    };
    this.#onDeadline = (ms) => {
      this.#limit = "deadline";
      answer(
        `the answer did not complete within the ${ms} ms ${this.target.names.deadline} (${reader.bytes} bytes of its body came)`,
      );
      incoming.destroy();
    };
    incoming.on("data", (chunk: Buffer) => {
      const stop = reader.add(chunk);
      if (stop === undefined) return;
      if (stop === "max-body") this.#limit = "max-body";
      answer(this.#whyReadingStopped(stop, reader.bytes));
      incoming.destroy();
    });
    incoming.on("end", () => answer());
    incoming.on("error", (error) =>
      answer(cutShort(reader.bytes, incoming.headers["content-length"], error.message)),
    );
  }

  #whyReadingStopped(stop: NonNullable<ReturnType<BodyReader["add"]>>, bytes: number): string {
    const { maxBodyBytes, names } = this.target;
    if (stop === "max-body")
      return `the body is larger than the ${formatBytes(maxBodyBytes)} ${names.maxBody} allows (stopped reading at ${bytes} bytes); raise ${names.maxBody} to judge it`;
    if (stop === "not-a-list")
      return `the body is larger than ${formatBytes(WHOLE_ANSWER_BYTES)}, more than any answer but a list of orders needs (stopped reading at ${bytes} bytes)`;
    return stop.unjudgeable;
  }

  #finish(exchange: Exchange): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#deadline);
    this.#arriveAtGate();
    this.#settle(exchange);
  }
}

/**
 * One body as it arrives: kept as chunks, or streamed into a list judge keeping only its start, and never
 * past the limit.
 */
class BodyReader {
  bytes = 0;
  readonly #chunks: Buffer[] = [];
  #kept = 0;

  constructor(
    private readonly limit: number,
    private readonly judge: ListReading | undefined,
  ) {}

  /**
   * Why nothing more is read, once the body is past a limit (--max-body, or what an answer not a list
   * holds) or the list cannot be judged at all.
   */
  add(chunk: Buffer): "max-body" | "not-a-list" | { unjudgeable: string } | undefined {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) return "max-body";
    if (this.judge) {
      try {
        this.judge.write(chunk);
      } catch (error) {
        // A fault met on this answer only: it fails this request, not the run.
        return { unjudgeable: judgeFault(error) };
      }
      if (this.#kept < EXCERPT_BYTES) {
        this.#chunks.push(chunk.subarray(0, EXCERPT_BYTES - this.#kept));
        this.#kept += Math.min(chunk.length, EXCERPT_BYTES - this.#kept);
      }
      return undefined;
    }
    if (this.bytes > WHOLE_ANSWER_BYTES) return "not-a-list";
    this.#chunks.push(chunk);
    return undefined;
  }

  response(status: number, headers: Record<string, string>, cut: string | undefined): ExchangeResponse {
    const bytes = Buffer.concat(this.#chunks);
    const body = bytes.toString("utf8");
    const notText = this.judge ? undefined : utf8Problem(bytes);
    const response: ExchangeResponse = {
      status,
      headers,
      body,
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

/** A request http.request refused to send, failed with its reason. */
function unsent(recorded: RecordedRequest, error: unknown): Exchange {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = error instanceof Error ? error.message : String(error);
  return {
    request: recorded,
    error: `the request could not be sent: ${reason}`,
    ...(typeof code === "string" ? { errorCode: code } : {}),
  };
}

function cutShort(received: number, contentLength: string | undefined, reason: string): string {
  const expected = contentLength !== undefined ? ` of the ${contentLength} its Content-Length announced` : "";
  return `the body broke off after ${received} bytes${expected} (${reason}); a cut body is not judged`;
}

export function flattenHeaders(headers: IncomingMessage["headers"]): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
