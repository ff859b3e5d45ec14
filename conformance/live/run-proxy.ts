import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { builtInContract } from "../../contract/built-in.ts";
import type { Contract } from "../../contract/contract.ts";
import { readOperations } from "../../contract/operations.ts";
import { hideSecrets } from "../hooks.ts";
import {
  createAgent,
  createHttpClient,
  flattenHeaders,
  hostnameOf,
  maskHeaders,
  requestTls,
  type TlsOptions,
} from "../http-client.ts";
import { ignoredProxyVariables, type ProxyChoice, ProxyConfigError, proxyFor } from "../proxy-env.ts";
import type { Report } from "../report.ts";
import { runProblem } from "../run-problems.ts";
import { ConformanceUsageError, DEFAULT_TIMEOUT_MS, TargetUnreachableError } from "../runner.ts";
import { decodeBody } from "./decode-body.ts";
import { DEFAULT_PROXY_PORT } from "./defaults.ts";
import { bearerToken } from "./expectation.ts";
import { forwardedRequestHeaders, forwardedResponseHeaders, pairsOf } from "./forward-headers.ts";
import { harEntryOf } from "./har-entry.ts";
import { HarWriter } from "./har-writer.ts";
import { type ForwardedExchange, type JudgedExchange, judgeExchange, violates } from "./judged-exchange.ts";
import { TrafficLedger } from "./ledger.ts";
import { type StateLimits, TrafficState } from "./state-rules.ts";

export interface ProxyOptions {
  /** The deployment's base address, ending in /v1: requests under the proxy's /v1 go under it. */
  upstream: string;
  /** Default 4020; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the proxy is for this machine's browsers and tests. */
  host?: string;
  /** Only the spec's documented statuses, even for input the spec has no case for (as the suite's --strict). */
  strict?: boolean;
  /** Answer an exchange that breaks the contract or a state rule with a 502 naming the violation. */
  errors?: boolean;
  /** Write the exchanges to this file as HAR 1.2, as they happen, credentials hidden. */
  har?: string;
  /** Headers added to every request to the upstream (a gateway's); masked in reports unless in showHeaders. */
  headers?: Readonly<Record<string, string>>;
  showHeaders?: readonly string[];
  tls?: TlsOptions;
  /** A proxy URL to reach the upstream through, over the proxy environment variables. */
  proxy?: string;
  env?: NodeJS.ProcessEnv;
  /** How long the upstream may take to answer each request (default 10000 ms). */
  timeoutMs?: number;
  contract?: Contract;
  /** What the state rules remember at most; the oldest is forgotten first. */
  limits?: Partial<StateLimits>;
  /** Sees each exchange with its verdict, once it is complete. */
  onExchange?: (judged: JudgedExchange) => void;
}

export interface RunningProxy {
  /** The proxy's base address, ending in /v1: point the app or the tests here. */
  url: string;
  upstream: string;
  /** Checks failed so far, state findings included. */
  readonly failed: number;
  /** The report over the traffic so far. */
  report(): Report;
  /** Stops taking requests, lets those in flight finish, and returns the report over all the traffic. */
  close(): Promise<Report>;
}

const BASE_PATH = "/v1";
const MAX_JUDGED_BYTES = 64 * 1024 * 1024;
const MAX_HAR_REQUEST_BYTES = 1024 * 1024;
const MAX_TOKENS_HIDDEN = 1000;

/**
 * A reverse proxy on loopback: every request goes to the upstream as it came (the Host set to the
 * upstream's), every answer back as it came, and each exchange under /v1 is judged by the suite's own
 * checks and the spec's state rules, with the suite's reporters over the whole traffic at the end.
 */
export async function runProxy(options: ProxyOptions): Promise<RunningProxy> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const upstream = parseUpstream(options.upstream);
  const env = options.env ?? process.env;
  let route: ProxyChoice;
  try {
    route = proxyFor(upstream, env, options.proxy);
  } catch (error) {
    if (error instanceof ProxyConfigError) throw new ConformanceUsageError(error.message);
    throw error;
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const secretHeaders = new Set(
    Object.keys(options.headers ?? {})
      .map((name) => name.toLowerCase())
      .filter((name) => !(options.showHeaders ?? []).some((shown) => shown.toLowerCase() === name)),
  );
  // Every token the traffic carried, with the masked headers' values and the proxy's credentials.
  const fixedSecrets = [
    ...Object.entries(options.headers ?? {})
      .filter(([name]) => secretHeaders.has(name.toLowerCase()))
      .map(([, value]) => value),
    ...(route.proxy ? [route.proxy.password, route.proxy.username].filter(Boolean) : []),
  ];
  const tokens = new Set<string>();
  const secrets = () => [...fixedSecrets, ...tokens];
  const hide = (text: string) => hideSecrets(text, secrets());

  const warnings: string[] = [...ignoredProxyVariables(env)];
  if (!/\/v1\/?$/.test(upstream.pathname))
    warnings.push(
      `the upstream ${upstream.href} does not end with /v1, the path segment of the interface version (§9.1)`,
    );
  if (options.tls?.insecure)
    warnings.push("certificates were not checked (--insecure): the proxy trusted whoever answered");

  await probe(upstream, route, options, timeoutMs);

  const contract = options.contract ?? builtInContract();
  const operations = readOperations(contract);
  const state = new TrafficState(options.limits);
  const ledger = new TrafficLedger(operations);
  const judgeContext = {
    operations,
    errorRecord: contract.schema("Error"),
    strict: options.strict ?? false,
    state,
  };
  const secure = upstream.protocol === "https:";
  const agent = await createAgent(secure, {
    ...(options.tls ? { tls: options.tls } : {}),
    ...(route.proxy ? { proxy: route.proxy } : {}),
  });
  const tls = requestTls(upstream, options.tls);
  const send = secure ? https.request : http.request;
  const upstreamBase = upstream.pathname.replace(/\/+$/, "");
  const har = options.har
    ? new HarWriter(options.har, { name: "petstore-conformance proxy", version: "1" })
    : undefined;
  const extraHeaders = Object.entries(options.headers ?? {});
  const inFlight = new Set<Promise<void>>();
  let seq = 0;

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const number = ++seq;
    const begun = performance.now();
    const begunAt = Date.now();
    const url = request.url ?? "/";
    const underBase = url === BASE_PATH || url.startsWith(`${BASE_PATH}/`) || url.startsWith(`${BASE_PATH}?`);
    const upstreamPath = underBase ? `${upstreamBase}${url.slice(BASE_PATH.length)}` : url;
    const requestPairs = pairsOf(request.rawHeaders);
    const authorization = request.headers.authorization;
    const token = bearerToken(authorization);
    if (token !== undefined && tokens.size < MAX_TOKENS_HIDDEN) tokens.add(token);
    const requestChunks: Buffer[] = [];
    let requestSize = 0;
    let waitMs = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    inFlight.add(finished);

    const complete = (
      answer:
        | { status: number; statusText: string; headers: Array<[string, string]>; raw: Buffer }
        | undefined,
      upstreamError?: string,
    ) => {
      const durationMs = performance.now() - begun;
      const decoded = answer ? decodeBody(answer.raw, answer.headers) : undefined;
      const recordedHeaders = maskHeaders(flattenHeaders(request.headers), ALWAYS_MASKED);
      const forwarded: ForwardedExchange = {
        seq: number,
        method: request.method ?? "GET",
        url,
        authorization,
        session: headerValue(request.headers["x-mock-session"]),
        recorded: { method: request.method ?? "GET", path: url, headers: recordedHeaders },
        durationMs,
        ...(answer && decoded
          ? {
              response: {
                status: answer.status,
                headers: Object.fromEntries(answer.headers.map(([n, v]) => [n.toLowerCase(), v])),
                body: decoded.toString("utf8"),
              },
            }
          : {}),
        ...(upstreamError !== undefined ? { upstreamError } : {}),
      };
      const judged = judgeExchange(forwarded, judgeContext);
      return { judged, decoded, durationMs };
    };

    const record = (
      judged: JudgedExchange,
      durationMs: number,
      answer:
        | { status: number; statusText: string; headers: Array<[string, string]>; body: Buffer; size: number }
        | undefined,
    ) => {
      // What a server echoes back (a key in a message) is hidden before anyone sees the verdict.
      for (const check of judged.checks) check.message = hide(check.message);
      for (const finding of judged.findings) finding.message = hide(finding.message);
      ledger.record(judged);
      if (har) {
        har.add(
          harEntryOf(
            {
              startedAt: begunAt,
              durationMs,
              waitMs,
              method: request.method ?? "GET",
              url: new URL(url, `http://${request.headers.host ?? "127.0.0.1"}`),
              requestHeaders: requestPairs,
              requestBody: Buffer.concat(requestChunks),
              ...(answer ? { response: answer } : {}),
              ...(judged.upstreamError
                ? { comment: `no answer from the upstream: ${judged.upstreamError}` }
                : {}),
            },
            secretHeaders,
            hide,
          ),
        );
      }
      options.onExchange?.(judged);
      inFlight.delete(finished);
      done();
    };

    const outgoing = send(
      {
        agent,
        method: request.method,
        protocol: upstream.protocol,
        hostname: hostnameOf(upstream),
        port: upstream.port,
        path: upstreamPath,
        headers: forwardedRequestHeaders(requestPairs, upstream.host, extraHeaders),
        timeout: timeoutMs,
        ...tls,
      },
      (incoming) => {
        waitMs = performance.now() - begun;
        const status = incoming.statusCode ?? 502;
        const statusText = incoming.statusMessage ?? "";
        const headers = forwardedResponseHeaders(incoming.rawHeaders);
        const chunks: Buffer[] = [];
        let size = 0;
        if (!options.errors) {
          response.writeHead(status, statusText, headers.flat());
          incoming.pipe(response);
        }
        incoming.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_JUDGED_BYTES) chunks.push(chunk);
        });
        incoming.on("end", () => {
          const raw = Buffer.concat(chunks);
          const { judged, decoded, durationMs } = complete({ status, statusText, headers, raw });
          if (options.errors) {
            if (violates(judged)) {
              judged.replaced = true;
              sendError(response, request, 502, "contract_violation", hide(violationMessage(judged)));
            } else response.writeHead(status, statusText, headers.flat()).end(raw);
          }
          record(judged, durationMs, { status, statusText, headers, body: decoded ?? raw, size });
        });
        incoming.on("error", (error) => {
          // Broken off after the answer began: the client sees the same, and nothing is judged.
          response.destroy();
          const { judged, durationMs } = complete(undefined, `the answer broke off: ${error.message}`);
          record(judged, durationMs, undefined);
        });
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      if (response.headersSent) return;
      const reason = error.code ? `${error.code}: ${error.message}` : error.message;
      const { judged, durationMs } = complete(undefined, hide(reason));
      const message = `the proxy got no answer from ${hide(redactUrl(upstream))}: ${hide(reason)}`;
      sendError(response, request, 502, "upstream_unreachable", message);
      record(judged, durationMs, undefined);
    });
    request.on("data", (chunk: Buffer) => {
      requestSize += chunk.length;
      if (requestSize <= MAX_HAR_REQUEST_BYTES) requestChunks.push(chunk);
    });
    request.pipe(outgoing);
    response.on("close", () => {
      if (!response.writableFinished) outgoing.destroy();
    });
  };

  const server = http.createServer(handle);
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new ConformanceUsageError(
              `port ${options.port ?? DEFAULT_PROXY_PORT} on ${host} is in use: pick another with --port (0 for any free one)`,
            )
          : error,
      ),
    );
    server.listen(options.port ?? DEFAULT_PROXY_PORT, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const address = host.includes(":") ? `[${host}]` : host;

  const report = () =>
    ledger.report({
      target: `${redactUrl(upstream)} (observed through the proxy)`,
      startedAt,
      durationMs: Math.round(performance.now() - started),
      warnings,
      state,
      secrets: secrets(),
    });
  let closing: Promise<Report> | undefined;
  return {
    url: `http://${address}:${port}${BASE_PATH}`,
    upstream: redactUrl(upstream),
    get failed() {
      return ledger.failed;
    },
    report,
    close() {
      closing ??= (async () => {
        const stopped = new Promise((resolve) => server.close(resolve));
        server.closeIdleConnections();
        await Promise.race([
          Promise.all(inFlight),
          new Promise((resolve) => setTimeout(resolve, timeoutMs + 1000).unref()),
        ]);
        server.closeAllConnections();
        await stopped;
        agent.destroy();
        har?.close();
        return report();
      })();
      return closing;
    },
  };
}

// Credentials of the client's own request, hidden wherever a report shows it.
const ALWAYS_MASKED = new Set(["proxy-authorization", "cookie"]);

/**
 * One request of the proxy's own at start, without a key (the suite's "no header" request: refused with 401,
 * it changes nothing), so that an upstream it cannot reach stops it with the suite's one-line errors.
 */
async function probe(upstream: URL, route: ProxyChoice, options: ProxyOptions, timeoutMs: number) {
  const client = await createHttpClient(upstream, {
    timeoutMs,
    commonHeaders: { ...options.headers },
    ...(options.tls ? { tls: options.tls } : {}),
    ...(route.proxy ? { proxy: route.proxy } : {}),
  });
  try {
    const exchange = await client.send("GET", "/store/orders", { accept: "application/json" });
    const problem = runProblem(exchange, upstream, route);
    if (problem) throw new TargetUnreachableError(problem.replace("--base-url", "--upstream"));
  } finally {
    client.close();
  }
}

function sendError(
  response: ServerResponse,
  request: IncomingMessage,
  status: number,
  code: string,
  message: string,
): void {
  const origin = request.headers.origin;
  response
    .writeHead(status, {
      "content-type": "application/json",
      "cache-control": "no-store",
      // The proxy's own answers reach a browser app on another origin too, as the upstream's would.
      ...(origin ? { "access-control-allow-origin": origin, vary: "Origin" } : {}),
    })
    .end(JSON.stringify({ code, message, status }));
}

function violationMessage(judged: JudgedExchange): string {
  const failed = judged.checks.filter((check) => check.status === "failed");
  const parts = [
    ...failed.map((check) => `${check.id}: ${check.message} (${check.spec ?? ""})`),
    ...judged.findings.map((finding) => `state.${finding.rule}: ${finding.message}`),
  ];
  return `the upstream's answer (${judged.status}) breaks the contract: ${parts.join("; ")}`;
}

function parseUpstream(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConformanceUsageError(`--upstream must be an absolute http(s) URL (got "${text}")`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConformanceUsageError(`--upstream must be an http or https URL (got "${text}")`);
  if (url.search || url.hash)
    throw new ConformanceUsageError(
      `--upstream is a base address, without ?query or #fragment (got "${text}")`,
    );
  return url;
}

/** The upstream for messages: without credentials in its URL. */
function redactUrl(url: URL): string {
  if (!url.username && !url.password) return url.href;
  return url.href.replace(
    `${url.protocol}//${url.username}${url.password ? `:${url.password}` : ""}@`,
    `${url.protocol}//***@`,
  );
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
