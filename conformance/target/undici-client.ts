import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import { formatBytes } from "../../common/byte-size.ts";
import { utf8Problem } from "../../common/utf8-stream.ts";
import { EXCERPT_CHARS, type Exchange, type ExchangeResponse } from "../judging/exchange.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import { judgeFault } from "../judging/list-judge.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";
import { replayValue } from "../reports/reproduction.ts";
import {
  type ClientOptions,
  DEFAULT_DEADLINE_MS,
  DEFAULT_MAX_BODY_BYTES,
  flattenHeaders,
  type HttpClient,
  maskHeaders,
  type SendOptions,
  WHOLE_ANSWER_BYTES,
} from "./http-client.ts";
import { RetryPolicy } from "./retry-policy.ts";

// Kept of a judged list for reports: enough for the excerpt, whatever its characters' width.
const EXCERPT_BYTES = EXCERPT_CHARS * 4;

/**
 * Whether undici's client can take a run's requests: plain HTTP, straight to the target. Through a proxy
 * or over TLS the node:http client stays, with its proxy agents and its certificate checks.
 */
export function undiciServes(baseUrl: URL, options: Pick<ClientOptions, "proxy" | "tls">): boolean {
  return baseUrl.protocol === "http:" && options.proxy === undefined && options.tls === undefined;
}

/**
 * The HttpClient on undici's pool of kept-alive connections, for a caller that sends many small requests
 * (explore): each answer is read by a dispatch handler straight into its reader, without a stream object
 * per answer. Paths go byte for byte; in-process interceptors of node:http do not see these requests.
 */
export async function createUndiciClient(
  baseUrl: URL,
  options: ClientOptions,
): Promise<HttpClient & { fetch: typeof fetch }> {
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
}

interface UndiciRequest {
  method: Dispatcher.HttpMethod;
  fullPath: string;
  headers: Record<string, string>;
  recorded: RecordedRequest;
  listJudge: (() => ListReading) | undefined;
}

class UndiciClient implements HttpClient {
  /**
   * fetch for hooks, on this client's pool for the mock's control API on the target's origin: a hook's
   * control calls (mock-control's orders) then cost a dispatch, not the whole WHATWG fetch. Other calls go
   * to `fetch`.
   */
  readonly fetch: typeof fetch = (input, init) => poolFetch(this.pool, this.baseUrl.origin, input, init);
  #count = 0;
  #retries = 0;
  readonly #target: UndiciTarget;
  readonly #retryPolicy: RetryPolicy;
  readonly #basePath: string;

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
    };
    this.#retryPolicy = new RetryPolicy(options.retry);
    this.#basePath = baseUrl.pathname.replace(/\/+$/, "");
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
    const request = this.#requestToSend(method, path, ownHeaders, sendOptions?.listJudge);
    if (sendOptions?.fresh) return this.#attemptOnOwnConnection(request);
    let exchange = await this.#attempt(request, this.pool);
    for (let retried = 0; ; retried++) {
      const wait = this.#retryPolicy.waitBeforeRetry(exchange, retried);
      if (wait === undefined) return exchange;
      await sleep(wait);
      this.#retries++;
      exchange = { ...(await this.#attempt(request, this.pool)), retries: retried + 1 };
    }
  }

  #requestToSend(
    method: string,
    path: string,
    ownHeaders: Record<string, string>,
    listJudge: SendOptions["listJudge"],
  ): UndiciRequest {
    const { options, baseUrl } = this;
    const headers = { ...options.commonHeaders, ...ownHeaders };
    const fullPath = `${this.#basePath}${path}`;
    const secrets = options.replaySecrets ?? new Map<string, string>();
    const recorded: RecordedRequest = {
      method,
      path: fullPath,
      headers: maskHeaders(headers, options.secretHeaders),
      replay: {
        method,
        url: `${baseUrl.origin}${fullPath}`,
        headers: Object.entries(headers).map(([name, value]) => [name, replayValue(value, secrets)]),
      },
    };
    return { method: method as Dispatcher.HttpMethod, fullPath, headers, recorded, listJudge };
  }

  async #attemptOnOwnConnection(request: UndiciRequest): Promise<Exchange> {
    const own = this.ownConnection();
    try {
      return await this.#attempt(request, own);
    } finally {
      own.destroy().catch(() => {});
    }
  }

  #attempt(request: UndiciRequest, through: Dispatcher): Promise<Exchange> {
    this.#count++;
    return new UndiciAttempt(this.#target, request, through).exchange;
  }
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
  // The mock's control API answers without redirects, which fetch would follow and this does not.
  const control = url !== undefined && url.origin === origin && url.pathname.startsWith("/__control/");
  if (!control || !plain) return fetch(input, init);
  const headers = Object.fromEntries(new Headers(init?.headers).entries());
  const method = (init?.method ?? "GET").toUpperCase() as Dispatcher.HttpMethod;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status = 0;
    let answerHeaders: Headers | undefined;
    pool.dispatch(
      {
        path: `${(url as URL).pathname}${(url as URL).search}`,
        method,
        headers,
        body: (body as string | undefined) ?? null,
      },
      {
        // undici takes a handler of this kind by its onRequestStart.
        onRequestStart: () => {},
        onResponseStart: (_controller, code, got) => {
          status = code;
          if (code >= 200) answerHeaders = new Headers(flattenHeaders(got));
        },
        onResponseData: (_controller, chunk) => {
          if (status >= 200) chunks.push(chunk);
        },
        onResponseEnd: () => {
          const noBody = status === 204 || status === 205 || status === 304;
          resolve(new Response(noBody ? null : Buffer.concat(chunks), { status, headers: answerHeaders }));
        },
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
  #answer: { status: number; headers: Record<string, string>; reader: UndiciBodyReader } | undefined;
  #sentAt: number | undefined;
  #limit: Exchange["limit"];
  readonly #deadline: NodeJS.Timeout;

  constructor(
    private readonly target: UndiciTarget,
    private readonly request: UndiciRequest,
    through: Dispatcher,
  ) {
    this.exchange = new Promise((resolve) => {
      this.#settle = resolve;
    });
    this.#deadline = setTimeout(() => this.#onDeadline(), target.deadlineMs);
    try {
      through.dispatch(
        { path: request.fullPath, method: request.method, headers: request.headers, blocking: false },
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
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (status < 200) return;
    const judge = status === 200 ? this.request.listJudge?.() : undefined;
    const reader = new UndiciBodyReader(this.target.maxBodyBytes, judge);
    this.#answer = { status, headers: flattenHeaders(headers), reader };
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const answer = this.#answer;
    if (answer === undefined || this.#settled) return;
    const stop = answer.reader.add(chunk);
    if (stop === undefined) return;
    if (stop === "max-body") this.#limit = "max-body";
    this.#answered(this.#whyReadingStopped(stop, answer.reader.bytes));
    controller.abort(new Error("reading stopped"));
  }

  onResponseEnd(): void {
    this.#answered();
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
    this.#finish({
      request: this.request.recorded,
      response: answer.reader.response(answer.status, answer.headers, cut),
      ...(this.#sentAt !== undefined ? { sentAt: this.#sentAt } : {}),
      ...(this.#limit !== undefined ? { limit: this.#limit } : {}),
    });
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

  #whyReadingStopped(stop: NonNullable<ReturnType<UndiciBodyReader["add"]>>, bytes: number): string {
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
    this.#settle(exchange);
  }
}

/**
 * One body as it arrives: kept as chunks, or streamed into a list judge keeping only its start, and never
 * past the limit.
 */
class UndiciBodyReader {
  bytes = 0;
  readonly #chunks: Buffer[] = [];
  #kept = 0;

  constructor(
    private readonly limit: number,
    private readonly judge: ListReading | undefined,
  ) {}

  /** Why nothing more is read: past a limit, or a list that cannot be judged at all. */
  add(chunk: Buffer): "max-body" | "not-a-list" | { unjudgeable: string } | undefined {
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

// undici's words for the answers it refuses to read, said the way a report reads.
const BROKEN_ANSWERS: Readonly<Record<string, string>> = {
  "bad response": "the target answered 100 Continue to a request that expected none",
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

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ").trim();
}

/** A request undici refused to send, failed with its reason. */
function unsent(recorded: RecordedRequest, error: unknown): Exchange {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = error instanceof Error ? oneLine(error.message) : String(error);
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
