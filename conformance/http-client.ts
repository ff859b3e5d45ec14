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
import type { RecordedRequest, RecordedResponse } from "./report.ts";
import { replayValue } from "./reproduction.ts";

export interface Exchange {
  request: RecordedRequest;
  /** Undefined when no response came back; then `error` says why. */
  response?: { status: number; headers: Record<string, string>; body: string };
  error?: string;
  /** The Node error code of a failure to get any answer (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT, …). */
  errorCode?: string;
  /** The proxy answered the tunnel request with this status instead of opening it. */
  proxyRefused?: number;
  /** How many 429 answers were waited out and retried before this one. */
  retries?: number;
  /** When the request was fully written (performance.now()), to tell how close together requests went out. */
  sentAt?: number;
}

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

export interface ClientOptions {
  timeoutMs: number;
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
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const EXCERPT_CHARS = 2000;
// Without Retry-After, a 429 is retried after 1 s, then 2 s, 4 s…, within the cap.
const DEFAULT_RETRY_WAIT_MS = 1000;

export interface HttpClient {
  /**
   * Sends a request under the base address. `fresh`: on a connection of its own, outside --concurrency
   * and without retries, as a burst of simultaneous clients needs.
   */
  send(
    method: string,
    path: string,
    headers: Record<string, string>,
    options?: { fresh?: boolean },
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

  const once = (
    method: string,
    fullPath: string,
    headers: Record<string, string>,
    recorded: RecordedRequest,
    through: Agent = agent,
  ) =>
    new Promise<Exchange>((resolve) => {
      count++;
      let proxyRefused: number | undefined;
      let sentAt: number | undefined;
      const outgoing: ClientRequest = request(
        {
          agent: through,
          method,
          protocol: baseUrl.protocol,
          hostname,
          port: baseUrl.port,
          path: fullPath,
          headers,
          timeout: options.timeoutMs,
          ...tls,
        },
        (incoming: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          incoming.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size <= MAX_BODY_BYTES) chunks.push(chunk);
          });
          incoming.on("end", () =>
            resolve({
              request: recorded,
              response: {
                status: incoming.statusCode ?? 0,
                headers: flattenHeaders(incoming.headers),
                body: Buffer.concat(chunks).toString("utf8"),
              },
              ...(proxyRefused !== undefined ? { proxyRefused } : {}),
              ...(sentAt !== undefined ? { sentAt } : {}),
            }),
          );
          incoming.on("error", (error) =>
            resolve({ request: recorded, error: `response broken off: ${error.message}` }),
          );
        },
      );
      // https-proxy-agent hands a refused tunnel back as the proxy's own answer; it must not pass for the target's.
      outgoing.on("proxyConnect", (connect: { statusCode: number }) => {
        if (connect.statusCode !== 200) proxyRefused = connect.statusCode;
      });
      outgoing.on("finish", () => {
        sentAt = performance.now();
      });
      outgoing.on("timeout", () => outgoing.destroy(new Error(`no response within ${options.timeoutMs} ms`)));
      outgoing.on("error", (error: NodeJS.ErrnoException) =>
        resolve({
          request: recorded,
          error: error.code ? `${error.code}: ${error.message}` : error.message,
          ...(error.code ? { errorCode: error.code } : {}),
        }),
      );
      outgoing.end();
    });

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
      if (sendOptions?.fresh) {
        const own = await createAgent(secure, { ...options, keepAlive: false });
        try {
          return await once(method, fullPath, headers, recorded, own);
        } finally {
          own.destroy();
        }
      }
      return limit(async () => {
        let exchange = await once(method, fullPath, headers, recorded);
        const retry = options.retry;
        for (let attempt = 0; retry && exchange.response?.status === 429 && attempt < retry.max; attempt++) {
          await sleep(retryWait(exchange.response.headers["retry-after"], attempt, retry.maxWaitMs));
          retries++;
          exchange = { ...(await once(method, fullPath, headers, recorded)), retries: attempt + 1 };
        }
        return exchange;
      });
    },
  };
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
export function recordResponse(response: NonNullable<Exchange["response"]>): RecordedResponse {
  const body =
    response.body.length > EXCERPT_CHARS ? `${response.body.slice(0, EXCERPT_CHARS)}…` : response.body;
  return { status: response.status, headers: response.headers, body };
}

export function maskHeaders(
  headers: Record<string, string>,
  secret?: ReadonlySet<string>,
): Record<string, string> {
  const masked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    masked[name] = lower === "authorization" ? maskAuthorization(value) : secret?.has(lower) ? "***" : value;
  }
  return masked;
}

/** Keeps the scheme, which a reader needs to see, and hides the credentials. */
export function maskAuthorization(value: string): string {
  const [scheme, ...rest] = value.trim().split(/\s+/);
  return rest.length === 0 || rest.join("") === "" ? value : `${scheme} ***`;
}

export function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
