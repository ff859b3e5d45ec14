import type { Dispatcher } from "undici";
import { type ControlTransport, fetchTransport } from "../../contract/control-client.ts";
import type { Exchange, ExchangeResponse } from "../judging/exchange.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";
import { BodyReader, cutShort, oneLine, runLimitOf, unsent } from "./answer-body.ts";
import { CLIENT_DECODERS_ROOM_BYTES, type DecoderRoom } from "./content-coding.ts";
import { flattenHeaders, type RequestToSend } from "./http-attempt.ts";
import {
  type ClientOptions,
  DEFAULT_DEADLINE_MS,
  DEFAULT_MAX_BODY_BYTES,
  type HttpClient,
  requestToSend,
  type SendOptions,
} from "./http-client.ts";
import { RetryPolicy } from "./retry-policy.ts";

/**
 * Whether undici's client can take a run's requests: plain HTTP, straight to the target. Through a proxy
 * or over TLS the node:http client stays, with its proxy agents and its certificate checks.
 */
export function undiciServes(
  baseUrl: URL,
  options: Pick<ClientOptions, "proxy" | "tls" | "commonHeaders">,
): boolean {
  const headers = Object.keys(options.commonHeaders ?? {});
  return (
    baseUrl.protocol === "http:" &&
    options.proxy === undefined &&
    options.tls === undefined &&
    !headers.some((name) => UNDICI_REFUSES.has(name.toLowerCase()))
  );
}

// Request headers undici refuses to be given (it frames and keeps connections itself); node:http sends them.
const UNDICI_REFUSES = new Set([
  "connection",
  "keep-alive",
  "upgrade",
  "transfer-encoding",
  "expect",
  "te",
  "trailer",
  "proxy-connection",
  "content-length",
]);

/**
 * The HttpClient on undici's pool of kept-alive connections, for a caller that sends many small requests
 * (explore): each answer is read by a dispatch handler straight into its reader, without a stream object
 * per answer. Paths go byte for byte; in-process interceptors of node:http do not see these requests.
 */
export async function createUndiciClient(
  baseUrl: URL,
  options: ClientOptions,
): Promise<HttpClient & { fetch: typeof fetch; controlTransport: ControlTransport }> {
  // Loaded only by the runs that use it.
  const { Pool, Client } = await import("undici");
  const connect = { timeout: options.timeoutMs };
  const pool = new Pool(baseUrl.origin, {
    pipelining: 1,
    connections: options.concurrency ?? null,
    connect,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const ownConnection = () => new Client(baseUrl.origin, { pipelining: 1, connect });
  return new UndiciClient(baseUrl, options, pool, ownConnection);
}

/** Where and within which limits every attempt goes. */
interface UndiciTarget {
  timeoutMs: number;
  deadlineMs: number;
  maxBodyBytes: number;
  names: SettingNames;
  /** What the decoders of this client's answers in flight are reserved from. */
  decoderRoom: DecoderRoom;
}

class UndiciClient implements HttpClient {
  /**
   * fetch for hooks, on this client's pool for the mock's control API on the target's origin: a hook's
   * control calls (mock-control's orders) then cost a dispatch, not the whole WHATWG fetch. Other calls go
   * to `fetch`.
   */
  readonly fetch: typeof fetch = (input, init) => poolFetch(this.pool, this.baseUrl.origin, input, init);
  /** The same for the hooks' control client (mock-control's), without WHATWG's Response. */
  readonly controlTransport: ControlTransport;
  #count = 0;
  #retries = 0;
  readonly #target: UndiciTarget;
  readonly #retryPolicy: RetryPolicy;
  readonly #requests = new Map<string, { ownHeaders: Record<string, string>; request: RequestToSend }>();

  constructor(
    private readonly baseUrl: URL,
    private readonly options: ClientOptions,
    private readonly pool: Dispatcher,
    private readonly ownConnection: () => Dispatcher,
  ) {
    this.#target = {
      timeoutMs: options.timeoutMs,
      deadlineMs: options.deadlineMs ?? DEFAULT_DEADLINE_MS,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      names: options.names ?? RUN_OPTION_NAMES,
      decoderRoom: new MemoryBudget(CLIENT_DECODERS_ROOM_BYTES),
    };
    this.#retryPolicy = new RetryPolicy(options.retry);
    this.controlTransport = poolTransport(pool, baseUrl.origin);
  }

  get count(): number {
    return this.#count;
  }

  get retries(): number {
    return this.#retries;
  }

  close(): void {
    this.pool.destroy().catch(() => {});
  }

  async send(
    method: string,
    path: string,
    ownHeaders: Record<string, string>,
    sendOptions?: SendOptions,
  ): Promise<Exchange> {
    const request = this.#prepared(method, path, ownHeaders, sendOptions?.listJudge);
    if (sendOptions?.fresh) return this.#attemptOnOwnConnection(request);
    return this.#retryPolicy.sendRetrying(
      () => this.#attempt(request, this.pool),
      () => this.#retries++,
    );
  }

  /**
   * The request as requestToSend makes it, made once per method, path and headers: a caller sends the
   * same few again and again. Its record is shared by their exchanges, which only read it.
   */
  #prepared(
    method: string,
    path: string,
    ownHeaders: Record<string, string>,
    listJudge: SendOptions["listJudge"],
  ): RequestToSend {
    const key = `${method} ${path}`;
    const known = this.#requests.get(key);
    if (known !== undefined && sameHeaders(known.ownHeaders, ownHeaders))
      return known.request.judgedBy(listJudge);
    const request = requestToSend(this.baseUrl, this.options, method, path, ownHeaders, listJudge);
    if (this.#requests.size >= PREPARED_REQUESTS) this.#requests.clear();
    this.#requests.set(key, { ownHeaders: { ...ownHeaders }, request });
    return request;
  }

  async #attemptOnOwnConnection(request: RequestToSend): Promise<Exchange> {
    const own = this.ownConnection();
    try {
      return await this.#attempt(request, own);
    } finally {
      own.destroy().catch(() => {});
    }
  }

  #attempt(request: RequestToSend, through: Dispatcher): Promise<Exchange> {
    this.#count++;
    return new UndiciAttempt(this.#target, request, through).exchange;
  }
}

// Requests kept made: the list, and the cancels of the orders a few histories are on.
const PREPARED_REQUESTS = 256;

function sameHeaders(kept: Record<string, string>, given: Record<string, string>): boolean {
  let count = 0;
  for (const name in given) {
    if (kept[name] !== given[name]) return false;
    count++;
  }
  return count === Object.keys(kept).length;
}

/** A call fetch would make, answered from the pool when it is a plain one (string body) to the origin. */
function poolFetch(
  pool: Dispatcher,
  origin: string,
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined,
): Promise<Response> {
  const url = typeof input === "string" ? new URL(input) : input instanceof URL ? input : undefined;
  const body = init?.body ?? undefined;
  const plain = init?.signal == null && init?.redirect === undefined && typeof (body ?? "") === "string";
  if (url === undefined || !isControl(url, origin) || !plain) return fetch(input, init);
  const headers = Object.fromEntries(new Headers(init?.headers).entries());
  const method = init?.method ?? "GET";
  return dispatched(pool, url, method, headers, body as string | undefined).then(
    ({ status, headers, bytes }) => {
      const noBody = status === 204 || status === 205 || status === 304;
      return new Response(noBody ? null : bytes, { status, headers: new Headers(headers) });
    },
  );
}

/**
 * Control requests to the mock on the target's origin sent on the pool, their answers read without
 * WHATWG's Response; any other goes by `fetch`.
 */
function poolTransport(pool: Dispatcher, origin: string): ControlTransport {
  const viaFetch = fetchTransport(fetch);
  return async ({ method, url, headers, body }) => {
    const parsed = new URL(url);
    if (!isControl(parsed, origin))
      return viaFetch({ method, url, headers, ...(body === undefined ? {} : { body }) });
    const got = await dispatched(pool, parsed, method, headers, body);
    return {
      status: got.status,
      text: got.bytes.toString("utf8"),
      headers: { get: (name) => got.headers[name.toLowerCase()] ?? null },
    };
  };
}

// The mock's control API answers without redirects, which fetch would follow and these do not.
function isControl(url: URL, origin: string): boolean {
  return url.origin === origin && url.pathname.startsWith("/__control/");
}

/** One request on the pool, its answer whole: status, headers as node:http reads them, body. */
function dispatched(
  pool: Dispatcher,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; headers: Record<string, string>; bytes: Buffer<ArrayBuffer> }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status = 0;
    let answerHeaders: Record<string, string> = {};
    pool.dispatch(
      {
        path: `${url.pathname}${url.search}`,
        method: method.toUpperCase() as Dispatcher.HttpMethod,
        headers,
        body: body ?? null,
      },
      {
        // undici takes a handler of this kind by its onRequestStart.
        onRequestStart: () => {},
        onResponseStart: (_controller, code, got) => {
          status = code;
          if (code >= 200) answerHeaders = flattenHeaders(got);
        },
        onResponseData: (_controller, chunk) => {
          if (status >= 200) chunks.push(chunk);
        },
        onResponseEnd: () => resolve({ status, headers: answerHeaders, bytes: Buffer.concat(chunks) }),
        onResponseError: (_controller, error) => reject(new TypeError("fetch failed", { cause: error })),
      },
    );
  });
}

/**
 * One request sent once on undici's dispatcher, read by this handler: it ends in one answer (whole, or cut
 * with the reason) or one failure. Informational answers (1xx) are skipped; undici fails a 100 or an
 * upgrade nobody asked for as a broken connection.
 */
class UndiciAttempt implements Dispatcher.DispatchHandler {
  readonly exchange: Promise<Exchange>;
  #settle: (exchange: Exchange) => void = () => {};
  #settled = false;
  #controller: Dispatcher.DispatchController | undefined;
  #answer: { status: number; headers: Record<string, string>; reader: BodyReader } | undefined;
  #sentAt: number | undefined;
  #limit: Exchange["limit"];
  #bodyEnded = false;
  readonly #deadline: NodeJS.Timeout;

  constructor(
    private readonly target: UndiciTarget,
    private readonly request: RequestToSend,
    through: Dispatcher,
  ) {
    this.exchange = new Promise((resolve) => {
      this.#settle = resolve;
    });
    this.#deadline = setTimeout(() => this.#onDeadline(), target.deadlineMs);
    try {
      through.dispatch(
        {
          path: request.fullPath,
          method: request.method as Dispatcher.HttpMethod,
          headers: request.headers,
          blocking: false,
        },
        this,
      );
    } catch (error) {
      // What undici refuses to send (a header with CR LF, a path with a space) it throws or reports at once.
      this.#finish(unsent(request.recorded, error));
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    this.#sentAt = performance.now();
    if (this.#settled) controller.abort(new Error("the deadline passed before the request was sent"));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (status < 200) return;
    const judge = status === 200 ? this.request.listJudge?.() : undefined;
    const read = flattenHeaders(headers);
    const reader: BodyReader = new BodyReader(this.target.maxBodyBytes, judge, read["content-encoding"], {
      stopped: (stop) => {
        this.#limit = runLimitOf(stop) ?? this.#limit;
        this.#answered(reader.stopReason(stop, this.target));
        // Decoding may stop after the last byte came, when there is nothing left to abort.
        if (!this.#bodyEnded) controller.abort(new Error("reading stopped"));
      },
      pause: (paused) => (paused ? controller.pause() : controller.resume()),
      decoderRoom: this.target.decoderRoom,
    });
    this.#answer = { status, headers: read, reader };
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const answer = this.#answer;
    if (answer === undefined || this.#settled) return;
    answer.reader.add(chunk);
  }

  onResponseEnd(): void {
    this.#bodyEnded = true;
    const answer = this.#answer;
    if (answer === undefined) return;
    answer.reader.ended(() => this.#answered());
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const answer = this.#answer;
    if (answer === undefined) {
      this.#failed(error);
      return;
    }
    const reason = isTimeout(error) ? `no byte for ${this.target.timeoutMs} ms` : oneLine(error.message);
    this.#answered(cutShort(answer.reader.bytes, answer.headers["content-length"], reason));
  }

  #onDeadline(): void {
    this.#limit = "deadline";
    const ms = this.target.deadlineMs;
    const answer = this.#answer;
    if (answer === undefined)
      this.#failed(new Error(`no complete answer within the ${ms} ms ${this.target.names.deadline}`));
    else
      this.#answered(
        `the answer did not complete within the ${ms} ms ${this.target.names.deadline} (${answer.reader.bytes} bytes of its body came)`,
      );
    this.#controller?.abort(new Error("deadline"));
  }

  #answered(cut?: string): void {
    const answer = this.#answer;
    if (answer === undefined || this.#settled) return;
    const exchange = new AnsweredExchange(
      this.request,
      answer.reader.response(answer.status, answer.headers, cut),
    );
    if (this.#sentAt !== undefined) exchange.sentAt = this.#sentAt;
    if (this.#limit !== undefined) exchange.limit = this.#limit;
    this.#finish(exchange);
  }

  #failed(error: Error): void {
    if (refusedToSend(error)) {
      this.#finish(unsent(this.request.recorded, error));
      return;
    }
    const code = (error as NodeJS.ErrnoException).code;
    const message = isTimeout(error)
      ? `no response within ${this.target.timeoutMs} ms`
      : (BROKEN_ANSWERS[error.message] ?? oneLine(error.message));
    this.#finish({
      request: this.request.recorded,
      error: code && !code.startsWith("UND_ERR") ? `${code}: ${message}` : message,
      ...(code ? { errorCode: code } : {}),
      ...(this.#limit !== undefined ? { limit: this.#limit } : {}),
    });
  }

  #finish(exchange: Exchange): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#deadline);
    this.#settle(exchange);
  }
}

/** An answered exchange: its request's record is made only when read, as most are never reported. */
class AnsweredExchange implements Exchange {
  declare sentAt?: number;
  declare limit?: Exchange["limit"];
  declare retries?: number;
  readonly #request: RequestToSend;

  constructor(
    request: RequestToSend,
    readonly response: ExchangeResponse,
  ) {
    this.#request = request;
  }

  get request(): RecordedRequest {
    return this.#request.recorded;
  }
}

// undici's words for the answers it refuses to read, said the way a report reads.
/** undici's failure of an answer node:http reads: a 100 Continue to a request that expected none. */
export const UNDICI_UNREAD_ANSWER = "the target answered 100 Continue to a request that expected none";

const BROKEN_ANSWERS: Readonly<Record<string, string>> = {
  "bad response": UNDICI_UNREAD_ANSWER,
  "bad upgrade": "the target switched protocols (101) for a request that asked for no upgrade",
};

function isTimeout(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return (
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    code === "UND_ERR_CONNECT_TIMEOUT"
  );
}

/** undici checks a request's path, method and headers as it takes it, and reports a refusal as its error. */
function refusedToSend(error: Error): boolean {
  return (error as NodeJS.ErrnoException).code === "UND_ERR_INVALID_ARG";
}
