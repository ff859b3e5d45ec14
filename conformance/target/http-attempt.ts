import type { Agent, ClientRequest, IncomingMessage, RequestOptions } from "node:http";
import type { RequestOptions as HttpsRequestOptions } from "node:https";
import type { Exchange } from "../judging/exchange.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";
import { BodyReader, cutShort, runLimitOf, unsent } from "./answer-body.ts";
import type { DecoderRoom } from "./content-coding.ts";
import { type StartGate, whenConnected } from "./start-gate.ts";

export { WHOLE_ANSWER_BYTES } from "./answer-body.ts";

// A reused keep-alive connection the server had already closed: the request never reached it.
const STALE_CONNECTION = new Set(["ECONNRESET", "EPIPE"]);

/** One request as it is sent, and sent again after a 429 or on a fresh connection. */
export interface RequestToSend {
  method: string;
  fullPath: string;
  headers: Record<string, string>;
  readonly recorded: RecordedRequest;
  /** For a 200 answer: a judge its body streams into, instead of being kept. */
  listJudge: (() => ListReading) | undefined;
  /** The same request, its 200 answer read by this judge. */
  judgedBy(listJudge: (() => ListReading) | undefined): RequestToSend;
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
  /** What the decoders of this client's answers in flight are reserved from. */
  decoderRoom: DecoderRoom;
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
    const reason = `no complete answer within the ${ms} ms ${this.target.names.deadline}`;
    this.#outgoing?.destroy(new Error(reason));
    // Settled here too: a request Node has already let go of (its socket taken by an upgrade) says nothing more.
    this.#finish({ request: this.request.recorded, error: reason, limit: "deadline" });
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
    // A 101 to a request that asked for no upgrade: Node hands the socket over and the request ends silently.
    outgoing.on("upgrade", (_incoming: IncomingMessage, socket: { destroy(): void }) => {
      socket.destroy();
      this.#finish({
        request: request.recorded,
        error: "the target switched protocols (101) for a request that asked for no upgrade",
      });
    });
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
    const coding = incoming.headers["content-encoding"];
    const reader: BodyReader = new BodyReader(this.target.maxBodyBytes, judge, coding, {
      stopped: (stop) => {
        this.#limit = runLimitOf(stop) ?? this.#limit;
        answer(reader.stopReason(stop, this.target));
        incoming.destroy();
      },
      pause: (paused) => (paused ? incoming.pause() : incoming.resume()),
      decoderRoom: this.target.decoderRoom,
    });
    const answer = (cut?: string) => {
      if (this.#settled) return;
      this.#finish({
        request: this.request.recorded,
        response: reader.response(status, flattenHeaders(incoming.headersDistinct), cut),
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
    incoming.on("data", (chunk: Buffer) => reader.add(chunk));
    incoming.on("end", () => reader.ended(() => answer()));
    incoming.on("error", (error) =>
      answer(cutShort(reader.bytes, incoming.headers["content-length"], error.message)),
    );
  }

  #finish(exchange: Exchange): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#deadline);
    this.#arriveAtGate();
    this.#settle(exchange);
  }
}

// Node keeps the first of a repeated header it knows to carry one value (a second Retry-After, say), and
// joins the others: answers read by either client then say the same.
const ONE_VALUED = new Set([
  "age",
  "authorization",
  "content-length",
  "etag",
  "expires",
  "from",
  "host",
  "if-modified-since",
  "if-unmodified-since",
  "last-modified",
  "location",
  "max-forwards",
  "proxy-authorization",
  "referer",
  "retry-after",
  "server",
  "user-agent",
]);

/**
 * Headers as every client and the proxy read them, each name once: given as node:http's `headersDistinct`
 * or undici's parse (a repeated header as the list of its values), or as node:http's own reading. Repeated
 * lines are combined as RFC 9110 §5.3 combines them, joined with commas, but for the one-valued headers
 * above. Content-Type is one-valued too (RFC 9110 §8.3), yet kept whole: a second media type must be seen
 * by the checks, never dropped as node:http drops it.
 */
export function flattenHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    flat[lower] =
      typeof value === "string" ? value : ONE_VALUED.has(lower) ? (value[0] ?? "") : value.join(", ");
  }
  return flat;
}

/** The Content-Type of an answer's raw header lines, read as `flattenHeaders` reads it; undefined for none. */
export function contentTypeOfRaw(rawHeaders: readonly string[]): string | undefined {
  const values: string[] = [];
  for (let at = 0; at + 1 < rawHeaders.length; at += 2)
    if ((rawHeaders[at] as string).toLowerCase() === "content-type")
      values.push(rawHeaders[at + 1] as string);
  return values.length > 0 ? values.join(", ") : undefined;
}
