import http, {
  type Agent,
  type ClientRequest,
  Agent as HttpAgent,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from "node:http";
import https, { Agent as HttpsAgent } from "node:https";
import { setTimeout as sleep } from "node:timers/promises";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import { formatBytes } from "../../common/byte-size.ts";
import { utf8Problem } from "../../common/utf8-stream.ts";
import { EXCERPT_CHARS, type Exchange, type ExchangeResponse } from "../judging/exchange.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import { judgeFault } from "../judging/list-judge.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";
import { replayValue } from "../reports/reproduction.ts";
import { maskedHeaderValue } from "./credentials.ts";

export interface TlsOptions {
  /** Trusted certificates in PEM; when given, added to Node's own trusted roots. */
  ca?: readonly string[];
  cert?: string;
  key?: string;
  /** No certificate check at all. */
  insecure?: boolean;
  /** The files the PEMs came from, for commands that repeat a request (`curl --cacert …`). */
  files?: { ca?: string; cert?: string; key?: string };
}

/** The longest one request may take by default, headers and whole body: a body that drips ends here. */
export const DEFAULT_DEADLINE_MS = 120_000;
/**
 * Bytes of an answer kept when it is not a list judged as it streams: an Error record or an empty body needs
 * far less, and this bounds what every request in flight can hold together.
 */
export const WHOLE_ANSWER_BYTES = 1024 * 1024;

export interface ClientOptions {
  /** Without a byte from the target. */
  timeoutMs: number;
  /** How the caller names its settings in messages (default: runConformance's options). */
  names?: SettingNames;
  /** For the whole request, headers and body (default DEFAULT_DEADLINE_MS). */
  deadlineMs?: number;
  /** Sent with every request (a mock session, a gateway's header); a request's own headers win. */
  commonHeaders?: Readonly<Record<string, string>>;
  /** Lower-case names of headers whose values reports show as `***`. */
  secretHeaders?: ReadonlySet<string>;
  /** Secret values and the variables a reproduction reads them from (the key, masked headers). */
  replaySecrets?: ReadonlyMap<string, string>;
  tls?: TlsOptions;
  proxy?: URL;
  /** Requests in flight at most; unbounded when absent. */
  concurrency?: number;
  /** How 429 answers are waited out: at most `max` retries, each wait capped at `maxWaitMs`. */
  retry?: { max: number; maxWaitMs: number };
  /** Bytes read of one body at most (default DEFAULT_MAX_BODY_BYTES); past it the check fails, naming it. */
  maxBodyBytes?: number;
}

/** 2 GiB: a list of about twenty million orders. */
export const DEFAULT_MAX_BODY_BYTES = 2 * 1024 ** 3;
// Kept of a judged list for reports: enough for the excerpt, whatever its characters' width.
const EXCERPT_BYTES = EXCERPT_CHARS * 4;
// A reused keep-alive connection the server had already closed: the request never reached it.
const STALE_CONNECTION = new Set(["ECONNRESET", "EPIPE"]);
// Without Retry-After, a 429 is retried after 1 s, then 2 s, 4 s…, within the cap.
const DEFAULT_RETRY_WAIT_MS = 1000;

export interface SendOptions {
  /** On a connection of its own, outside --concurrency and without retries. */
  fresh?: boolean;
  /** For a 200 answer: a judge its body streams into, instead of being kept. */
  listJudge?: () => ListReading;
}

export interface HttpClient {
  /**
   * Sends a request under the base address. `fresh`: on a connection of its own, outside --concurrency
   * and without retries, as a burst of simultaneous clients needs.
   */
  send(
    method: string,
    path: string,
    headers: Record<string, string>,
    options?: SendOptions,
  ): Promise<Exchange>;
  /** How many requests were sent, retries included. */
  readonly count: number;
  /** How many 429 answers were retried. */
  readonly retries: number;
  close(): void;
}

/** A keep-alive client that sends paths byte for byte (no URL normalisation) under the base address. */
export async function createHttpClient(baseUrl: URL, options: ClientOptions): Promise<HttpClient> {
  const secure = baseUrl.protocol === "https:";
  const agent = await createAgent(secure, options);
  const hostname = hostnameOf(baseUrl);
  const tls = requestTls(baseUrl, options.tls);
  // Looked up on the module at each call, so that in-process interceptors (Mock Service Worker's, nock)
  // that replace http.request see the suite's requests too.
  const request = (options: http.RequestOptions, callback: (incoming: IncomingMessage) => void) =>
    (secure ? https.request : http.request)(options, callback);
  const basePath = baseUrl.pathname.replace(/\/+$/, "");
  const limit = createLimit(options.concurrency);
  let count = 0;
  let retries = 0;

  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const names = options.names ?? RUN_OPTION_NAMES;
  const once = ({ method, fullPath, headers, recorded, listJudge }: Attempt, through: Agent) =>
    new Promise<Exchange>((resolve) => {
      count++;
      let proxyRefused: number | undefined;
      let sentAt: number | undefined;
      let answered = false;
      const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
      // Before the answer: the request fails; once it is coming: what came is judged as cut.
      let limit: Exchange["limit"];
      let outgoing: ClientRequest;
      let deadlineHit = (ms: number): void => {
        limit = "deadline";
        outgoing.destroy(new Error(`no complete answer within the ${ms} ms ${names.deadline}`));
      };
      const deadline = setTimeout(() => deadlineHit(deadlineMs), deadlineMs);
      const requestOptions: http.RequestOptions = {
        agent: through,
        method,
        protocol: baseUrl.protocol,
        hostname,
        port: baseUrl.port,
        path: fullPath,
        headers,
        timeout: options.timeoutMs,
        ...tls,
      };
      const onAnswer = (incoming: IncomingMessage) => {
        answered = true;
        const status = incoming.statusCode ?? 0;
        const judge = status === 200 ? listJudge?.() : undefined;
        const reader = new BodyReader(maxBody, judge);
        let settled = false;
        const settle = (cut?: string) => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          resolve({
            request: recorded,
            response: reader.response(status, flattenHeaders(incoming.headers), cut),
            ...(proxyRefused !== undefined ? { proxyRefused } : {}),
            ...(sentAt !== undefined ? { sentAt } : {}),
            ...(limit !== undefined ? { limit } : {}),
          });
        };
        deadlineHit = (ms) => {
          limit = "deadline";
          settle(
            `the answer did not complete within the ${ms} ms ${names.deadline} (${reader.bytes} bytes of its body came)`,
          );
          incoming.destroy();
        };
        incoming.on("data", (chunk: Buffer) => {
          const tooLarge = reader.add(chunk);
          if (tooLarge === undefined) return;
          if (tooLarge === "max-body") limit = "max-body";
          settle(
            tooLarge === "max-body"
              ? `the body is larger than the ${formatBytes(maxBody)} ${names.maxBody} allows (stopped reading at ${reader.bytes} bytes); raise ${names.maxBody} to judge it`
              : tooLarge === "not-a-list"
                ? `the body is larger than ${formatBytes(WHOLE_ANSWER_BYTES)}, more than any answer but a list of orders needs (stopped reading at ${reader.bytes} bytes)`
                : tooLarge.unjudgeable,
          );
          incoming.destroy();
        });
        incoming.on("end", () => settle());
        incoming.on("error", (error) =>
          settle(cutShort(reader.bytes, incoming.headers["content-length"], error.message)),
        );
      };
      try {
        outgoing = request(requestOptions, onAnswer);
      } catch (error) {
        // What http.request refuses to send (a header with CR LF, a bad method) it throws at once: the
        // request fails with one line, its deadline cleared, rather than leaving the timer to fire.
        clearTimeout(deadline);
        resolve(unsent(recorded, error));
        return;
      }
      // https-proxy-agent hands a refused tunnel back as the proxy's own answer; it must not pass for the target's.
      outgoing.on("proxyConnect", (connect: { statusCode: number }) => {
        if (connect.statusCode !== 200) proxyRefused = connect.statusCode;
      });
      outgoing.on("finish", () => {
        sentAt = performance.now();
      });
      outgoing.on("timeout", () => outgoing.destroy(new Error(`no response within ${options.timeoutMs} ms`)));
      outgoing.on("error", (error: NodeJS.ErrnoException) => {
        if (answered) return;
        clearTimeout(deadline);
        const stale = outgoing.reusedSocket && STALE_CONNECTION.has(error.code ?? "");
        resolve({
          request: recorded,
          error: error.code ? `${error.code}: ${error.message}` : error.message,
          ...(error.code ? { errorCode: error.code } : {}),
          ...(stale ? { staleConnection: true } : {}),
          ...(limit !== undefined ? { limit } : {}),
        });
      });
      outgoing.end();
    });

  // A GET whose reused connection the server had closed before answering is sent once more on a fresh one;
  // a DELETE is not, since it may have been carried out.
  const sendOnce = async (attempt: Attempt, through: Agent): Promise<Exchange> => {
    const exchange = await once(attempt, through);
    if (!exchange.staleConnection || attempt.method !== "GET") return exchange;
    const fresh = await createAgent(secure, { ...options, keepAlive: false });
    try {
      return await once(attempt, fresh);
    } finally {
      fresh.destroy();
    }
  };

  return {
    get count() {
      return count;
    },
    get retries() {
      return retries;
    },
    close: () => agent.destroy(),
    async send(method, path, ownHeaders, sendOptions) {
      const headers = { ...options.commonHeaders, ...ownHeaders };
      const fullPath = `${basePath}${path}`;
      const recorded: RecordedRequest = {
        method,
        path: fullPath,
        headers: maskHeaders(headers, options.secretHeaders),
        replay: {
          method,
          url: `${baseUrl.origin}${fullPath}`,
          headers: Object.entries(headers).map(([name, value]) => [
            name,
            replayValue(value, options.replaySecrets ?? new Map()),
          ]),
        },
      };
      const attempt: Attempt = { method, fullPath, headers, recorded, listJudge: sendOptions?.listJudge };
      if (sendOptions?.fresh) {
        const own = await createAgent(secure, { ...options, keepAlive: false });
        try {
          return await once(attempt, own);
        } finally {
          own.destroy();
        }
      }
      return limit(async () => {
        let exchange = await sendOnce(attempt, agent);
        const retry = options.retry;
        for (let retried = 0; retry && exchange.response?.status === 429 && retried < retry.max; retried++) {
          await sleep(retryWait(exchange.response.headers["retry-after"], retried, retry.maxWaitMs));
          retries++;
          exchange = { ...(await sendOnce(attempt, agent)), retries: retried + 1 };
        }
        return exchange;
      });
    },
  };
}

/** One request as it is sent, and sent again after a 429 or on a fresh connection. */
interface Attempt {
  method: string;
  fullPath: string;
  headers: Record<string, string>;
  recorded: RecordedRequest;
  listJudge: SendOptions["listJudge"];
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

/** A URL's host name as sockets take it: IPv6 addresses without their brackets. */
export function hostnameOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "");
}

/**
 * TLS options for each request to the target. Given with every request as well as to the agent: through a
 * proxy, the tunnel's TLS is set up from the request's options, and without the host among them, so the
 * certificate is checked against the target's own name here.
 */
export function requestTls(target: URL, tls: TlsOptions | undefined) {
  if (target.protocol !== "https:") return {};
  const hostname = hostnameOf(target);
  return {
    ...tlsSettings(tls),
    checkServerIdentity: (_host: string, certificate: PeerCertificate) =>
      checkServerIdentity(hostname, certificate),
  };
}

// The proxy agents are loaded only for runs through a proxy: most runs go direct, and start faster without.
export async function createAgent(
  secure: boolean,
  options: Pick<ClientOptions, "tls" | "proxy"> & { keepAlive?: boolean },
): Promise<Agent> {
  const tls = tlsSettings(options.tls);
  const keepAlive = options.keepAlive ?? true;
  if (options.proxy) {
    if (secure) {
      const { HttpsProxyAgent } = await import("https-proxy-agent");
      return new HttpsProxyAgent(options.proxy, { keepAlive, ...tls });
    }
    const { HttpProxyAgent } = await import("http-proxy-agent");
    return new HttpProxyAgent(options.proxy, { keepAlive });
  }
  return secure ? new HttpsAgent({ keepAlive, ...tls }) : new HttpAgent({ keepAlive });
}

function tlsSettings(tls: TlsOptions | undefined) {
  return {
    ...(tls?.ca ? { ca: [...tls.ca] } : {}),
    ...(tls?.cert ? { cert: tls.cert } : {}),
    ...(tls?.key ? { key: tls.key } : {}),
    ...(tls?.insecure ? { rejectUnauthorized: false } : {}),
  };
}

/** Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3), capped; a back-off when it is absent. */
export function retryWait(header: string | undefined, attempt: number, maxWaitMs: number): number {
  let wait = DEFAULT_RETRY_WAIT_MS * 2 ** attempt;
  if (header !== undefined && /^\d+$/.test(header.trim())) wait = Number(header.trim()) * 1000;
  else if (header !== undefined && !Number.isNaN(Date.parse(header))) wait = Date.parse(header) - Date.now();
  return Math.min(Math.max(wait, 0), maxWaitMs);
}

/** At most `concurrency` tasks at once, the others queued in order. */
function createLimit(concurrency: number | undefined): <T>(task: () => Promise<T>) => Promise<T> {
  if (concurrency === undefined) return (task) => task();
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/** A response as a report shows it: headers and the start of the body. */
export function maskHeaders(
  headers: Record<string, string>,
  secret?: ReadonlySet<string>,
): Record<string, string> {
  const masked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) masked[name] = maskedHeaderValue(name, value, secret);
  return masked;
}

export function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
