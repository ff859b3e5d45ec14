import type http from "node:http";
import type { Agent, IncomingMessage, ServerResponse } from "node:http";
import { bearerToken } from "../../common/bearer.ts";
import { utf8Problem } from "../../common/utf8-stream.ts";
import type { Routed } from "../../contract/operations.ts";
import { JudgeTurns } from "../judging/judge-turns.ts";
import type { ListJudges } from "../judging/list-feed.ts";
import type { ListVerdict } from "../judging/list-judge.ts";
import { HeldBytes } from "../judging/memory-budget.ts";
import { isCancelOperation, isListOperation, orderIdSegment } from "../judging/operation-traits.ts";
import { PROXY_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";
import { maskedTarget, requestSecrets } from "../target/credentials.ts";
import { flattenHeaders, hostnameOf, maskHeaders } from "../target/http-client.ts";
import { CancelsInFlight } from "./cancels-in-flight.ts";
import { DeadlineSweep } from "./deadline-sweep.ts";
import { PROXY_BASE_PATH } from "./defaults.ts";
import { int64Id } from "./expectation.ts";
import { forwardedResponseHeaders, requestHeaderFilter } from "./forward-headers.ts";
import { type BodyOutcome, ForwardedBody } from "./forwarded-body.ts";
import type { HarSource } from "./har-entry.ts";
import { harSource, tapRequestBody, type UpstreamAnswer } from "./har-tap.ts";
import { HeldAnswer } from "./held-answer.ts";
import type { ForwardedExchange } from "./judged-exchange.ts";
import type { CheckedRequest } from "./request-edge.ts";

export interface ForwarderSettings {
  upstream: URL;
  /** The contract's operation a request is for (by the one router of contract/operations.ts). */
  route: (method: string, target: string) => Routed | undefined;
  agent: Agent;
  /** TLS options for each request to an https upstream. */
  tls: Record<string, unknown>;
  send: typeof http.request;
  /** Until the answer starts. */
  timeoutMs: number;
  /** For the whole exchange, the answer's last byte included: a body that drips is cut here. */
  deadlineMs: number;
  /** Headers added to every request to the upstream. */
  added: ReadonlyArray<[string, string]>;
  /**
   * An HTTP forward proxy that requests to a plain-http upstream go through, asked in absolute form for
   * the upstream's own URL (`agent` and `send` then reach the proxy). An https upstream is reached through
   * a CONNECT tunnel by `agent` instead.
   */
  via?: ForwardProxy;
  /** Hold each answer until it is judged, and replace a violating one (--errors). */
  holdAnswers: boolean;
  /** Keep what the HAR needs: the request's headers and body. */
  keepForHar: boolean;
  /** Hides secrets in what the proxy says itself. */
  hide: (text: string) => string;
  /** Header and query parameter names (lower case) that carry credentials beyond the usual ones. */
  secretNames: ReadonlySet<string>;
  /** Decoded bytes of one body judged at most; larger ones pass through unchanged, not judged. */
  maxBodyBytes: number;
  /** The judges a list answered 200 streams into as it is forwarded, once it is large. */
  judges: ListJudges;
  /** The answers arriving, counted for the judges' turns (default: the forwarder's own). */
  turns?: JudgeTurns;
  /** The account of what all exchanges in flight hold together (default: HELD_BYTES_LIMIT). */
  held?: HeldBytes;
  /** How the caller names its settings in what the proxy says (default: runProxy's options). */
  names?: SettingNames;
}

export interface ForwardProxy {
  hostname: string;
  port: string;
  /** The Proxy-Authorization header's value, from the proxy URL's credentials. */
  authorization?: string;
}

/** What the forwarder hands on once an exchange is over. */
export interface ExchangeOutcome {
  forwarded: ForwardedExchange;
  har?: HarSource;
  /** With held answers: sends the upstream's answer as it came, or the proxy's own instead. */
  answer?: {
    pass(): void;
    replace(status: number, record: { code: string; message: string }): void;
    /** Ends the held answer with the proxy's own 502 (or a cut) when passing or replacing it failed. */
    fail(): void;
  };
}

/** How an exchange ended, once: with an answer, without one, cut off, or by a fault of the proxy's own. */
interface ExchangeEnd {
  answer?: UpstreamAnswer;
  upstreamError?: string;
  reply?: ExchangeOutcome["answer"];
  /** When the answer's last byte came (a large list is still being judged after it). */
  answeredAt?: number;
  cutOff?: string;
  unheld?: string;
  fault?: string;
  /** Answered in full, but not judged, and why. */
  notJudged?: string;
}

/**
 * The request handler: sends each request on to the upstream as it came (only Host names the upstream),
 * streams the answer back as it came while keeping a copy to judge, and answers 502 with an Error record
 * when the upstream gives none. Judging happens after, in `done`, off the bytes' way. Each exchange runs
 * under its own supervisor: whatever one of its parts throws ends that exchange (a 502 when nothing was
 * answered yet) as a fault of the proxy's, handed on like any other end, and never reaches the process.
 */
export function createForwarder(
  settings: ForwarderSettings,
  done: (outcome: ExchangeOutcome) => void,
): {
  forward: (request: IncomingMessage, response: ServerResponse, checked: CheckedRequest) => void;
  stop: () => void;
  cancelInFlight: (orderId: string) => boolean;
  /** Ends every exchange still in flight, each handed on as cut off for this reason; how many there were. */
  cutInFlight: (reason: string) => number;
} {
  const { upstream, agent, send, timeoutMs, deadlineMs, via } = settings;
  const upstreamBase = upstream.pathname.replace(/\/+$/, "");
  const hostname = hostnameOf(upstream);
  const requestHeaders = requestHeaderFilter(upstream.host, settings.added);
  const held = settings.held ?? new HeldBytes();
  const turns = settings.turns ?? new JudgeTurns();
  const names = settings.names ?? PROXY_OPTION_NAMES;
  // Every exchange not yet handed on, with the way to cut it off.
  const inFlight = new Set<(reason: string) => void>();
  let seq = 0;
  const cancelling = new CancelsInFlight();
  const deadlineMessage = () => `not complete within the ${deadlineMs} ms ${names.deadline}`;
  const deadlines = new DeadlineSweep(timeoutMs, () => new Error(deadlineMessage()));

  const forward = (request: IncomingMessage, response: ServerResponse, checked: CheckedRequest) => {
    const number = ++seq;
    const begun = performance.now();
    const begunAt = Date.now();
    const { method, target: url } = checked;
    const underBase =
      url === PROXY_BASE_PATH ||
      url.startsWith(`${PROXY_BASE_PATH}/`) ||
      url.startsWith(`${PROXY_BASE_PATH}?`);
    // Reports show the request only when a check fails: its masked headers are made then.
    let recorded: RecordedRequest | undefined;
    const record = () => {
      recorded ??= {
        method,
        path: maskedTarget(url, settings.secretNames),
        headers: maskHeaders(flattenHeaders(request.headers), settings.secretNames),
      };
      return recorded;
    };
    let requestChunks: Buffer[] = [];
    let waitMs = 0;
    let over = false;
    let releaseBody: (() => void) | undefined;
    let incomingNow: IncomingMessage | undefined;
    let outgoing: http.ClientRequest | undefined;
    // Keyed as the state rules name the order: its exact digits, however the path spelled them.
    const routed = settings.route(method, url);
    const segment =
      routed && isCancelOperation(routed.operation)
        ? orderIdSegment(routed.operation, routed.params)
        : undefined;
    const cancelled = segment === undefined ? undefined : int64Id(segment);
    if (cancelled !== undefined) cancelling.began(cancelled);

    const finish = (end: ExchangeEnd) => {
      if (over) return;
      over = true;
      inFlight.delete(cut);
      deadlines.ended(cut);
      if (cancelled !== undefined) cancelling.ended(cancelled);
      let outcome: ExchangeOutcome;
      try {
        outcome = outcomeOf(end);
      } catch (error) {
        // The outcome itself could not be built: handed on all the same, as a fault, so that it is counted.
        outcome = outcomeOf({
          fault: settings.hide(`the proxy failed on this exchange: ${messageOf(error)}`),
        });
      }
      try {
        done(outcome);
      } finally {
        releaseBody?.();
      }
    };
    const outcomeOf = (end: ExchangeEnd): ExchangeOutcome => {
      const { answer, upstreamError } = end;
      const durationMs = (end.answeredAt ?? performance.now()) - begun;
      const forwarded: ForwardedExchange = {
        seq: number,
        method,
        url,
        token: end.fault === undefined ? bearerToken(request.headers.authorization) : undefined,
        secrets: end.fault === undefined ? requestSecrets(request.rawHeaders, url, settings.secretNames) : [],
        session: headerText(request.headers["x-mock-session"]),
        recorded: record,
        startedAt: begun,
        durationMs,
      };
      if (answer) forwarded.response = new LazyResponse(answer.status, answer.incoming, answer.body);
      const notJudged = end.notJudged ?? answer?.body.notJudged;
      if (notJudged !== undefined) forwarded.notJudged = notJudged;
      if (upstreamError !== undefined) forwarded.upstreamError = upstreamError;
      if (end.cutOff !== undefined) forwarded.cutOff = end.cutOff;
      if (end.unheld !== undefined) forwarded.unheld = end.unheld;
      if (end.fault !== undefined) forwarded.fault = end.fault;
      const har =
        settings.keepForHar && end.fault === undefined
          ? harSource({
              begunAt,
              durationMs,
              waitMs,
              method,
              url: checked.url,
              request,
              requestChunks,
              answer,
              upstreamError,
              extra: end,
            })
          : undefined;
      return { forwarded, ...(har ? { har } : {}), ...(end.reply ? { answer: end.reply } : {}) };
    };
    /** Ends the exchange at once, whatever state it is in: the client gets a 502 if nothing was answered. */
    const end = (status: number, code: string, message: string, how: ExchangeEnd) => {
      incomingNow?.destroy();
      outgoing?.destroy();
      if (!response.headersSent && !response.destroyed) sendError(response, status, { code, message });
      else response.destroy();
      finish(how);
    };
    const cut = (reason: string) => end(502, "proxy_stopped", reason, { cutOff: reason });
    const fault = (error: unknown) => {
      const message = `the proxy failed on this exchange: ${messageOf(error)}`;
      if (over) {
        response.destroy();
        return;
      }
      end(502, "proxy_fault", settings.hide(message), { fault: settings.hide(message) });
    };
    // Every part of the exchange runs through this: a throw ends the exchange, never the process.
    const guard =
      <A extends unknown[]>(part: (...args: A) => void) =>
      (...args: A) => {
        try {
          part(...args);
        } catch (error) {
          fault(error);
        }
      };
    inFlight.add(cut);
    // The whole exchange ends by its deadline, in any state: upgraded, informational, dripping, half-closed.
    deadlines.exchange(cut, begun + deadlineMs, () => {
      // The client has its whole answer: only the judging outlived the deadline.
      if (response.writableEnded) finish({ notJudged: `judging went past the ${names.deadline}` });
      else
        end(504, "upstream_timeout", settings.hide(deadlineMessage()), { upstreamError: deadlineMessage() });
    });

    const onAnswer = (incoming: IncomingMessage) => {
      incomingNow = incoming;
      if (outgoing) deadlines.answered(outgoing);
      waitMs = performance.now() - begun;
      const status = incoming.statusCode ?? 502;
      const statusText = incoming.statusMessage ?? "";
      const headers = forwardedResponseHeaders(incoming.rawHeaders);
      const unusable = unusableStatus(status, statusText);
      if (unusable !== undefined) {
        invalidAnswer(unusable);
        return;
      }
      deadlines.answering(incoming, begun + deadlineMs);
      let size = 0;
      const isList = status === 200 && routed !== undefined && isListOperation(routed.operation);
      // Reading from the upstream pauses while the client is behind, as a plain proxy's does; the judge
      // works beside the forwarding, and paces it only while the answer is held anyway (--errors).
      const paused = new Set<"client" | "judge">();
      const pause = (why: "client" | "judge", pausing: boolean) => {
        if (pausing) paused.add(why);
        else paused.delete(why);
        if (paused.size > 0) incoming.pause();
        else incoming.resume();
      };
      const write = (chunk: Buffer) => {
        if (!response.write(chunk)) {
          pause("client", true);
          response.once(
            "drain",
            guard(() => pause("client", false)),
          );
        }
      };
      const answer = new HeldAnswer(settings.holdAnswers, held, settings.maxBodyBytes, names, {
        start: () => response.writeHead(status, statusText, headers),
        write: (chunk, flushed) => response.write(chunk, flushed),
        end: () => response.end(),
      });
      if (settings.holdAnswers)
        response.once(
          "close",
          guard(() => answer.closed()),
        );
      const body = new ForwardedBody({
        maxBytes: settings.maxBodyBytes,
        contentEncoding: headerText(incoming.headers["content-encoding"]),
        judges: isList ? settings.judges : undefined,
        held,
        names,
        turns,
        ...(settings.holdAnswers
          ? {
              pacing: {
                active: () => answer.holding,
                pause: (pausing: boolean) => pause("judge", pausing),
              },
            }
          : {}),
      });
      releaseBody = () => {
        body.release();
        answer.giveBack();
      };
      if (!answer.holding) response.writeHead(status, statusText, headers);
      // Written chunk by chunk rather than piped: one listener instead of pipe's six, on every exchange.
      incoming.on(
        "data",
        guard((chunk: Buffer) => {
          size += chunk.length;
          body.add(chunk);
          if (!answer.take(chunk, size)) write(chunk);
        }),
      );
      incoming.on(
        "end",
        guard(() => {
          const answeredAt = performance.now();
          if (!answer.holding) response.end();
          body.end().then(
            guard((outcome: BodyOutcome) => {
              const reply = answer.holding
                ? {
                    // Passed on chunk by chunk as they came: each stays in the account until the client's
                    // connection took it, however slowly it reads.
                    pass: () => answer.pass(),
                    replace: (replacement: number, record: { code: string; message: string }) =>
                      sendError(response, replacement, record, upstreamCors(incoming)),
                    fail: () => {
                      if (!response.headersSent)
                        sendError(response, 502, { code: "proxy_fault", message: "the proxy failed" });
                      else response.destroy();
                    },
                  }
                : undefined;
              finish({
                answer: { status, statusText, incoming, body: outcome, size },
                ...(reply ? { reply } : {}),
                answeredAt,
                ...(answer.unheld === undefined ? {} : { unheld: answer.unheld }),
              });
            }),
            fault,
          );
        }),
      );
      incoming.on(
        "error",
        guard((error: Error) => {
          // Broken off after the answer began: the client sees the same, and nothing is judged.
          response.destroy();
          finish({ upstreamError: `the answer broke off: ${error.message}` });
        }),
      );
    };
    /** An answer that cannot be passed on: the client gets a whole 502 instead. */
    const invalidAnswer = (why: string) =>
      end(
        502,
        "upstream_invalid_answer",
        settings.hide(`the upstream ${upstream.origin} gave an answer HTTP cannot carry: ${why}`),
        { upstreamError: settings.hide(`an answer HTTP cannot carry: ${why}`) },
      );

    guard(() => {
      // What the HAR keeps of the request's body, as it goes on to the upstream.
      if (settings.keepForHar) requestChunks = tapRequestBody(request);
      const upstreamPath = underBase ? `${upstreamBase}${url.slice(PROXY_BASE_PATH.length)}` : url;
      const headers = requestHeaders(request.rawHeaders);
      if (via?.authorization !== undefined) headers.push("Proxy-Authorization", via.authorization);
      const sent = send(
        {
          agent,
          method,
          ...(via
            ? // The upstream's URL spelled out, so that no path the client sent ("//elsewhere/x") names a host.
              { hostname: via.hostname, port: via.port, path: `${upstream.origin}${upstreamPath}` }
            : { protocol: upstream.protocol, hostname, port: upstream.port, path: upstreamPath }),
          headers,
          ...settings.tls,
        },
        guard(onAnswer),
      );
      outgoing = sent;
      deadlines.waitFor(sent, begun);
      // The request asked for no other protocol (the proxy passes no Upgrade on): a switch is no answer.
      sent.on(
        "upgrade",
        guard((_incoming: IncomingMessage, socket: import("node:net").Socket) => {
          socket.destroy();
          deadlines.answered(sent);
          invalidAnswer("101 Switching Protocols to a request that asked for no other protocol");
        }),
      );
      sent.on(
        "error",
        guard((error: NodeJS.ErrnoException) => {
          deadlines.answered(sent);
          if (response.headersSent || over) return;
          const reason = error.code ? `${error.code}: ${error.message}` : error.message;
          end(
            502,
            "upstream_unreachable",
            settings.hide(`the proxy got no answer from the upstream ${upstream.origin}: ${reason}`),
            { upstreamError: settings.hide(reason) },
          );
        }),
      );
      const { "content-length": length, "transfer-encoding": chunked } = request.headers;
      if ((length !== undefined && length !== "0") || chunked !== undefined) request.pipe(sent);
      else {
        // No body to stream: the upstream request ends at once, as most of this API's requests do.
        request.resume();
        sent.end();
      }
      response.on(
        "close",
        guard(() => {
          if (!response.writableFinished) sent.destroy();
        }),
      );
    })();
  };

  return {
    forward,
    stop: () => deadlines.stop(),
    cancelInFlight: (orderId) => cancelling.has(orderId),
    cutInFlight: (reason) => {
      const count = inFlight.size;
      for (const cut of [...inFlight]) cut(reason);
      return count;
    },
  };
}

/**
 * Why an upstream's status line cannot be passed on, if it cannot: Node's parser reads any status of
 * 0-999 (and header bytes the writer accepts alike), but its writer refuses a status under 100, and HTTP
 * has none past 599. An answer is data, never a reason for the proxy to throw: checked before anything is
 * written, so the client gets a whole 502 instead.
 */
function unusableStatus(status: number, statusText: string): string | undefined {
  if (!Number.isInteger(status) || status < 100 || status > 599) return `status ${status}, outside 100-599`;
  if (/[^\t\x20-\x7e\x80-\xff]/.test(statusText)) return "a status text with bytes HTTP cannot carry";
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The proxy's own answer, an Error record. It grants a browser on another origin no more than the upstream
 * did: the upstream's own CORS headers when there was an answer to replace, none when there was not, and
 * never an Origin echoed for its own sake.
 */
export function sendError(
  response: ServerResponse,
  status: number,
  record: { code: string; message: string },
  cors: Readonly<Record<string, string>> = {},
): void {
  response
    .writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...cors })
    .end(JSON.stringify({ ...record, status }));
}

/** The CORS headers of the upstream's answer, which a replacement of it carries on. */
function upstreamCors(incoming: IncomingMessage): Record<string, string> {
  const cors: Record<string, string> = {};
  for (const name of [
    "access-control-allow-origin",
    "access-control-allow-credentials",
    "access-control-expose-headers",
    "vary",
  ]) {
    const value = incoming.headers[name];
    if (typeof value === "string") cors[name] = value;
  }
  return cors;
}

/**
 * The answer as the checks read it; its headers and text are made only when a check reads them. A class,
 * not an object literal with getters, which V8 keeps alive through young-generation collections.
 */
export class LazyResponse {
  readonly contentType: string;
  /** The body decoded: whole, or its start when a large list was judged as it streamed. */
  readonly bytes: Buffer;
  readonly received: number;
  readonly list?: ListVerdict;
  readonly cut?: string;
  #headers: Record<string, string> | undefined;
  #body: string | undefined;

  constructor(
    readonly status: number,
    private readonly incoming: IncomingMessage,
    outcome: BodyOutcome,
  ) {
    this.contentType = headerText(incoming.headers["content-type"]) ?? "";
    this.bytes = outcome.decoded;
    this.received = outcome.received;
    if (outcome.list) this.list = outcome.list;
    if (outcome.cut !== undefined) this.cut = outcome.cut;
  }

  get headers(): Record<string, string> {
    this.#headers ??= flattenHeaders(this.incoming.headers);
    return this.#headers;
  }

  get body(): string {
    this.#body ??= this.bytes.toString("utf8");
    return this.#body;
  }

  get bodyBytes(): Uint8Array {
    return this.bytes;
  }

  /** Asked of a body that is not a list only: a list's bytes are checked by its judge as they come. */
  get notUtf8(): string | undefined {
    return this.list ? undefined : utf8Problem(this.bytes);
  }
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
