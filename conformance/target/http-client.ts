import http, { type Agent, Agent as HttpAgent } from "node:http";
import https, { Agent as HttpsAgent } from "node:https";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import type { Exchange } from "../judging/exchange.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";
import { replayValue } from "../reports/reproduction.ts";
import { CLIENT_DECODERS_ROOM_BYTES } from "./content-coding.ts";
import { maskedHeaderValue } from "./credentials.ts";
import { type AttemptTarget, HttpAttempt, type RequestToSend } from "./http-attempt.ts";
import { RetryPolicy, type TooManyRequestsLimits } from "./retry-policy.ts";
import type { StartGate } from "./start-gate.ts";

export { flattenHeaders, WHOLE_ANSWER_BYTES } from "./http-attempt.ts";

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
  retry?: TooManyRequestsLimits;
  /** Bytes read of one body at most (default DEFAULT_MAX_BODY_BYTES); past it the check fails, naming it. */
  maxBodyBytes?: number;
}

/** 2 GiB: a list of about twenty million orders. */
export const DEFAULT_MAX_BODY_BYTES = 2 * 1024 ** 3;

export interface SendOptions {
  /** On a connection of its own, outside --concurrency and without retries. */
  fresh?: boolean;
  /** As `fresh`, and sent together with the other requests of this gate once all their connections are open. */
  together?: StartGate;
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
  const agent = await createAgent(baseUrl.protocol === "https:", options);
  return new KeepAliveClient(baseUrl, options, agent);
}

/**
 * Each request is one HttpAttempt, or several when the retry policy sends it again: once more on a fresh
 * connection when a kept-alive one had been closed, and after each 429 it waits out.
 */
class KeepAliveClient implements HttpClient {
  #count = 0;
  #retries = 0;
  readonly #secure: boolean;
  readonly #target: AttemptTarget;
  readonly #retryPolicy: RetryPolicy;
  readonly #withinConcurrency: <T>(task: () => Promise<T>) => Promise<T>;

  constructor(
    private readonly baseUrl: URL,
    private readonly options: ClientOptions,
    private readonly agent: Agent,
  ) {
    const secure = baseUrl.protocol === "https:";
    this.#secure = secure;
    this.#target = {
      url: baseUrl,
      hostname: hostnameOf(baseUrl),
      requestOptions: requestTls(baseUrl, options.tls),
      timeoutMs: options.timeoutMs,
      deadlineMs: options.deadlineMs ?? DEFAULT_DEADLINE_MS,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      names: options.names ?? RUN_OPTION_NAMES,
      decoderRoom: new MemoryBudget(CLIENT_DECODERS_ROOM_BYTES),
      // Looked up on the module at each call, so that in-process interceptors (Mock Service Worker's, nock)
      // that replace http.request see the suite's requests too.
      request: (requestOptions, onAnswer) =>
        (secure ? https.request : http.request)(requestOptions, onAnswer),
    };
    this.#retryPolicy = new RetryPolicy(options.retry);
    this.#withinConcurrency = createLimit(options.concurrency);
  }

  get count(): number {
    return this.#count;
  }

  get retries(): number {
    return this.#retries;
  }

  close(): void {
    this.agent.destroy();
  }

  async send(
    method: string,
    path: string,
    ownHeaders: Record<string, string>,
    sendOptions?: SendOptions,
  ): Promise<Exchange> {
    const request = requestToSend(
      this.baseUrl,
      this.options,
      method,
      path,
      ownHeaders,
      sendOptions?.listJudge,
    );
    if (sendOptions?.fresh || sendOptions?.together)
      return this.#attemptOnOwnConnection(request, sendOptions.together);
    return this.#withinConcurrency(() =>
      this.#retryPolicy.sendRetrying(
        () => this.#attemptOnKeptConnection(request),
        () => this.#retries++,
      ),
    );
  }

  /** One attempt on the kept-alive connections, and one on a fresh connection if the policy resends it. */
  async #attemptOnKeptConnection(request: RequestToSend): Promise<Exchange> {
    const exchange = await this.#attempt(request, this.agent);
    if (!this.#retryPolicy.resendsOnFreshConnection(request.method, exchange)) return exchange;
    return this.#attemptOnOwnConnection(request);
  }

  async #attemptOnOwnConnection(request: RequestToSend, gate?: StartGate): Promise<Exchange> {
    const own = await createAgent(this.#secure, { ...this.options, keepAlive: false });
    try {
      return await this.#attempt(request, own, gate);
    } finally {
      own.destroy();
    }
  }

  #attempt(request: RequestToSend, through: Agent, gate?: StartGate): Promise<Exchange> {
    this.#count++;
    return new HttpAttempt(this.#target, request, through, gate).exchange;
  }
}

/** A request as every client sends and records it: under the base address, its secrets masked. */
export function requestToSend(
  baseUrl: URL,
  options: Pick<ClientOptions, "commonHeaders" | "secretHeaders" | "replaySecrets">,
  method: string,
  path: string,
  ownHeaders: Record<string, string>,
  listJudge: SendOptions["listJudge"],
): RequestToSend {
  const headers = { ...options.commonHeaders, ...ownHeaders };
  const fullPath = `${baseUrl.pathname.replace(/\/+$/, "")}${path}`;
  const record = (): RecordedRequest => {
    const secrets = options.replaySecrets ?? new Map<string, string>();
    return {
      method,
      path: fullPath,
      headers: maskHeaders(headers, options.secretHeaders),
      replay: {
        method,
        url: `${baseUrl.origin}${fullPath}`,
        headers: Object.entries(headers).map(([name, value]) => [name, replayValue(value, secrets)]),
      },
    };
  };
  return new PreparedRequest(method, fullPath, headers, listJudge, { make: record });
}

/**
 * A request ready to send. Its record (its headers masked, its replay) is made when first read, once for
 * every copy: most exchanges of a long run are never reported.
 */
class PreparedRequest implements RequestToSend {
  constructor(
    readonly method: string,
    readonly fullPath: string,
    readonly headers: Record<string, string>,
    readonly listJudge: RequestToSend["listJudge"],
    private readonly record: { make: () => RecordedRequest; made?: RecordedRequest },
  ) {}

  get recorded(): RecordedRequest {
    this.record.made ??= this.record.make();
    return this.record.made;
  }

  judgedBy(listJudge: RequestToSend["listJudge"]): RequestToSend {
    if (listJudge === this.listJudge) return this;
    return new PreparedRequest(this.method, this.fullPath, this.headers, listJudge, this.record);
  }
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
