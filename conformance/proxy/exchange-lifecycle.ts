import type http from "node:http";
import type { Agent, ClientRequest, IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { bearerToken } from "../../common/bearer.ts";
import { utf8Problem } from "../../common/utf8-stream.ts";
import type { Routed } from "../../contract/operations.ts";
import type { JudgeTurns } from "../judging/judge-turns.ts";
import type { ListJudges } from "../judging/list-feed.ts";
import type { ListVerdict } from "../judging/list-judge.ts";
import type { MemoryBudget } from "../judging/memory-budget.ts";
import { isListOperation } from "../judging/operation-traits.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest } from "../reports/report.ts";
import { maskedTarget, requestSecrets } from "../target/credentials.ts";
import { contentTypeOfRaw } from "../target/http-attempt.ts";
import { flattenHeaders, maskHeaders } from "../target/http-client.ts";
import type { CancelsInFlight } from "./cancels-in-flight.ts";
import type { DeadlineSweep } from "./deadline-sweep.ts";
import { PROXY_BASE_PATH } from "./defaults.ts";
import { forwardedResponseHeaders } from "./forward-headers.ts";
import type { BodyOutcome } from "./forwarded-body.ts";
import type { HarSource } from "./har-entry.ts";
import type { ForwardedExchange, MethodOverride } from "./judged-exchange.ts";
import { sendError } from "./own-answer.ts";
import type { CheckedRequest } from "./request-edge.ts";

export interface ForwarderSettings {
  upstream: URL;
  /**
   * The contract's operation a request is for and how its path spelled it (by the one router of
   * contract/operations.ts): read once here, by every tap and the judging alike.
   */
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
  held?: MemoryBudget;
  /** Cancels in flight, which the judging asks about (default: the forwarder's own). */
  cancels?: CancelsInFlight;
  /** How the caller names its settings in what the proxy says (default: runProxy's options). */
  names?: SettingNames;
  /** Told once of a problem that degrades the run as it goes (held answers that cannot be set aside). */
  onProblem?: (problem: string) => void;
  /**
   * When the proxy started (performance.now()): exchanges' instants are ms from it, as the report's
   * duration is, rather than from the process's start (default 0, the latter).
   */
  clockStart?: number;
  /** Taps composed after the forwarder's own on each exchange, called in order (metrics, recording). */
  taps?: (exchange: Exchange) => ExchangeTap[];
}

export interface ForwardProxy {
  hostname: string;
  port: string;
  /** The Proxy-Authorization header's value, from the proxy URL's credentials. */
  authorization?: string;
}

/** What an exchange hands on once it is over. */
export interface ExchangeOutcome {
  forwarded: ForwardedExchange;
  har?: HarSource;
  /** With held answers: sends the upstream's answer as it came, or the proxy's own instead. */
  answer?: HeldReply;
}

export interface HeldReply {
  pass(): void;
  replace(status: number, record: { code: string; message: string }): void;
  /** Ends the held answer with the proxy's own 502 (or a cut) when passing or replacing it failed. */
  fail(): void;
}

/** What came back from the upstream, once its head is in: the body as the forwarder kept it. */
export type UpstreamAnswer = {
  status: number;
  statusText: string;
  incoming: IncomingMessage;
  body: BodyOutcome;
  size: number;
};

/** Informational heads an upstream may send before its answer: past them it is no answer (a 502). */
export const MOST_INFORMATIONAL_HEADS = 100;

export const CLIENT_LEFT = "the client closed its connection before its answer was whole";

/** How an exchange ended, once: with an answer, without one, cut off, or by a fault of the proxy's own. */
export interface ExchangeEnd {
  answer?: UpstreamAnswer;
  upstreamError?: string;
  reply?: HeldReply;
  /** When the answer's last byte came (a large list is still being judged after it). */
  answeredAt?: number;
  cutOff?: string;
  /** The status the client was sent before the answer broke off: its head went out. */
  sentStatus?: number;
  unheld?: string;
  fault?: string;
  /** Answered in full, but not judged, and why. */
  notJudged?: string;
  /** …for a limit of the proxy's (judging past the deadline). */
  overLimit?: true;
  /**
   * The exchange ended before its answer was whole (the stop, the deadline, the client leaving, the upstream
   * breaking off): why. `answer` then holds what came of it, to be judged in part.
   */
  brokenOff?: string;
}

/** Why reading from the upstream pauses: the client is behind, the judge is, or a held answer has no room. */
export type PauseReason = "client" | "judge" | "room";

/** The upstream's answer as it began, checked to be one HTTP can carry on. */
export interface UpstreamHead {
  status: number;
  statusText: string;
  /** The headers passed on to the client, in raw form. */
  headers: string[];
  incoming: IncomingMessage;
  /** A list answered 200: judged as it streams once large. */
  isList: boolean;
}

/**
 * One part of what the proxy does with each exchange, beside the forwarding: every hook is optional and
 * the exchange calls its taps in order. Whatever a hook throws fails that exchange only.
 */
export interface ExchangeTap {
  /** The request arrived and is about to go on to the upstream. */
  onRequest?(exchange: Exchange): void;
  /** The upstream's answer began. */
  onUpstreamHead?(head: UpstreamHead): void;
  /** A chunk of the answer (`size`: its bytes so far); `true` when the tap holds it back from the client. */
  onData?(chunk: Buffer, size: number): unknown;
  /** Whether the tap holds the answer back from the client: it then starts and ends the answer itself. */
  readonly holding?: boolean;
  /**
   * The answer's last byte came, before any tap's `onEnd` (which may wait for a verdict): a tap that holds
   * the answer and lets go of it later ends it then.
   */
  onUpstreamEnd?(): void;
  /**
   * The answer's last byte came, or it broke off (`end.brokenOff`, not called on a tap that holds it): the
   * tap adds what it knows to how the exchange ended (a promise to wait for).
   */
  onEnd?(end: ExchangeEnd): unknown;
  /** The answer broke off after it began. */
  onError?(error: Error): void;
  /**
   * The exchange is over, however it ended: the tap adds its part to what is handed on. Called again, with
   * a fault, when the outcome could not be built the first time.
   */
  onFinish?(end: ExchangeEnd, outcome: ExchangeOutcome): void;
  /** What was handed on is done with: what the tap holds goes back. */
  onRelease?(): void;
}

/** What an exchange needs of its forwarder: the settings, and where it goes once it is over. */
export interface ExchangeContext {
  settings: ForwarderSettings;
  upstreamBase: string;
  hostname: string;
  requestHeaders: (raw: string[]) => string[];
  names: SettingNames;
  /** The account of what all exchanges in flight hold: bytes written to a client are held until taken. */
  held: MemoryBudget;
  deadlines: DeadlineSweep;
  deadlineMessage: () => string;
  taps: (exchange: Exchange) => ExchangeTap[];
  /** The exchange is over: the forwarder forgets it, before its outcome is handed on. */
  over: (exchange: Exchange) => void;
  done: (outcome: ExchangeOutcome) => void;
}

const NOT_OVERRIDDEN: readonly MethodOverride[] = [];

/**
 * One exchange, from the request to the outcome handed on: it sends the request on to the upstream as it
 * came (only Host names the upstream), streams the answer back as it came, and answers 502 with an Error
 * record when the upstream gives none. What else is done with it (the HAR, a held answer, the body kept to
 * judge, cancels in flight) is its taps'. It runs under its own supervisor: whatever one of its parts
 * throws ends this exchange (a 502 when nothing was answered yet, else a cut) as a fault of the proxy's,
 * handed on like any other end, and never reaches the process.
 */
export class Exchange {
  readonly begun = performance.now();
  readonly begunAt = Date.now();
  /** When the request came in, in ms from the proxy's start: the instant the judging orders it by. */
  readonly startedAt: number;
  readonly method: string;
  readonly url: string;
  readonly routed: Routed | undefined;
  /** The methods its method overrides name, each with the operation it spells with the path, if any. */
  readonly overridden: readonly MethodOverride[];
  /** How long the upstream took to begin its answer. */
  waitMs = 0;
  #taps: readonly ExchangeTap[] = [];
  #over = false;
  #incoming: IncomingMessage | undefined;
  #outgoing: http.ClientRequest | undefined;
  #recorded: RecordedRequest | undefined;
  #size = 0;
  /** Bytes written to the client that its connection has not taken yet, held in the account. */
  #unflushed = 0;
  #clientGone = false;
  /** The connection to the upstream (or the forward proxy) was made: a byte of the request may have gone. */
  #connected = false;
  /** The taps are adding what they know to the exchange's end: of a whole answer, or of one broken off. */
  #ending: "whole" | "broken" | undefined;
  // Reading from the upstream pauses while the client is behind, as a plain proxy's does; the judge works
  // beside the forwarding, and paces it only while the answer is held anyway (--errors), as does a held
  // answer waiting for room in the account.
  readonly #paused = new Set<PauseReason>();

  constructor(
    readonly context: ExchangeContext,
    readonly number: number,
    readonly request: IncomingMessage,
    readonly response: ServerResponse,
    readonly checked: CheckedRequest,
  ) {
    this.startedAt = this.begun - (context.settings.clockStart ?? 0);
    this.method = checked.method;
    this.url = checked.target;
    this.routed = routedAsForwarded(context, this.method, this.url);
    const { overrides } = checked;
    this.overridden =
      overrides === undefined || overrides.length === 0
        ? NOT_OVERRIDDEN
        : overrides.map((method) => {
            const routed = routedAsForwarded(context, method, this.url);
            return routed ? { method, routed } : { method };
          });
  }

  /** Composes the taps and sends the request on. */
  onRequest(): void {
    this.guard(() => {
      this.#taps = this.context.taps(this);
      for (const tap of this.#taps) tap.onRequest?.(this);
      this.#send();
    })();
  }

  onUpstreamHead(incoming: IncomingMessage): void {
    this.#incoming = incoming;
    const { deadlines, settings } = this.context;
    if (this.#outgoing) deadlines.answered(this.#outgoing);
    this.waitMs = performance.now() - this.begun;
    const status = incoming.statusCode ?? 502;
    const statusText = incoming.statusMessage ?? "";
    const unusable = unusableStatus(status, statusText);
    if (unusable !== undefined) {
      this.#invalidAnswer(unusable);
      return;
    }
    deadlines.answering(incoming, this.begun + settings.deadlineMs);
    const head: UpstreamHead = {
      status,
      statusText,
      headers: forwardedResponseHeaders(incoming.rawHeaders),
      incoming,
      isList: status === 200 && this.routed !== undefined && isListOperation(this.routed.operation),
    };
    for (const tap of this.#taps) tap.onUpstreamHead?.(head);
    if (!this.#holding()) this.response.writeHead(status, statusText, head.headers);
    // Written chunk by chunk rather than piped: one listener instead of pipe's six, on every exchange.
    incoming.on(
      "data",
      this.guard((chunk: Buffer) => this.onData(chunk)),
    );
    incoming.on(
      "end",
      this.guard(() => this.onEnd()),
    );
    incoming.on(
      "error",
      this.guard((error: Error) => this.onError(error)),
    );
  }

  onData(chunk: Buffer): void {
    this.#size += chunk.length;
    const size = this.#size;
    let heldBack = false;
    for (const tap of this.#taps) if (tap.onData?.(chunk, size) === true) heldBack = true;
    if (!heldBack && !this.#forward(chunk)) {
      this.pause("client", true);
      this.response.once(
        "drain",
        this.guard(() => this.pause("client", false)),
      );
    }
  }

  /**
   * Writes a chunk to the client, held in the account until its connection took it: the process holds it
   * meanwhile, however slowly the client reads. False when the client is behind.
   */
  #forward(chunk: Buffer): boolean {
    const bytes = chunk.length;
    this.context.held.take(bytes);
    this.#unflushed += bytes;
    return this.response.write(chunk, () => this.#flushed(bytes));
  }

  #flushed(bytes: number): void {
    if (this.#clientGone) return;
    this.#unflushed -= bytes;
    this.context.held.give(bytes);
  }

  /** The client's connection closed: what it had not taken goes back (its write callbacks may never come). */
  #clientClosed(): void {
    if (this.#clientGone) return;
    this.#clientGone = true;
    this.context.held.give(this.#unflushed);
    this.#unflushed = 0;
  }

  onEnd(): void {
    const answeredAt = performance.now();
    for (const tap of this.#taps) tap.onUpstreamEnd?.();
    if (!this.#holding()) this.response.end();
    this.#ending = "whole";
    this.#endTaps({ answeredAt }, 0);
  }

  /** Broken off after the answer began: the client sees the same, and what came is judged in part. */
  onError(error: Error): void {
    // Once broken off, the stream's own end of it (its destruction) says nothing more.
    if (this.#ending === "broken") return;
    const sent = this.response.headersSent ? this.response.statusCode : undefined;
    for (const tap of this.#taps) tap.onError?.(error);
    this.response.destroy();
    const upstreamError = `the answer broke off: ${error.message}`;
    const end: ExchangeEnd = { upstreamError, brokenOff: upstreamError };
    if (sent !== undefined) end.sentStatus = sent;
    this.#breakOff(end);
  }

  /**
   * Ends the exchange at once, handed on as cut off for this reason once what came of it is judged (a
   * judge's thread answers on a later turn): the stop waits for that, then calls `endCut`.
   */
  cut(reason: string): void {
    // One already ending (whole, or broken off) is being judged on what came: the stop waits for that.
    if (this.#ending !== undefined) return;
    this.#abort(502, "proxy_stopped", reason, { cutOff: reason, brokenOff: reason });
  }

  /** Hands on a cut exchange whose judging of what came did not end within the stop's grace, without it. */
  endCut(reason: string): void {
    if (!this.#over) this.#finish({ cutOff: reason, brokenOff: reason });
  }

  /** Past the whole exchange's deadline, in any state: upgraded, informational, dripping, half-closed. */
  expire(): void {
    const { names, deadlineMessage, settings } = this.context;
    // The client has its whole answer: only the judging outlived the deadline.
    if (this.response.writableEnded)
      this.#finish({ notJudged: `judging went past the ${names.deadline}`, overLimit: true });
    else
      this.#abort(504, "upstream_timeout", settings.hide(deadlineMessage()), {
        upstreamError: deadlineMessage(),
        brokenOff: deadlineMessage(),
      });
  }

  /** A fault of the proxy's own on this exchange: it ends here, and is handed on as a fault. */
  fault(error: unknown): void {
    if (this.#over) {
      this.response.destroy();
      return;
    }
    const message = this.context.settings.hide(`the proxy failed on this exchange: ${messageOf(error)}`);
    this.#abort(502, "proxy_fault", message, { fault: message });
  }

  /** Pauses reading from the upstream while any reason holds. */
  pause(why: PauseReason, pausing: boolean): void {
    if (pausing) this.#paused.add(why);
    else this.#paused.delete(why);
    if (this.#paused.size > 0) this.#incoming?.pause();
    else this.#incoming?.resume();
  }

  #holding(): boolean {
    for (const tap of this.#taps) if (tap.holding === true) return true;
    return false;
  }

  /**
   * The taps' `onEnd` from `from` on, in order, each waited for when it takes time; then the finish. Of an
   * answer broken off, a tap that holds it back has nothing to end: the others add what came of it.
   */
  #endTaps(end: ExchangeEnd, from: number): void {
    const taps = this.#taps;
    for (let at = from; at < taps.length; at++) {
      const tap = taps[at];
      if (end.brokenOff !== undefined && tap?.holding === true) continue;
      const waiting = tap?.onEnd?.(end);
      if (waiting instanceof Promise) {
        waiting.then(
          this.guard(() => this.#endTaps(end, at + 1)),
          (error: unknown) => this.fault(error),
        );
        return;
      }
    }
    this.#finish(end);
  }

  #send(): void {
    const { settings, upstreamBase, hostname, requestHeaders, deadlines } = this.context;
    const { upstream, via } = settings;
    const { request, url } = this;
    const upstreamPath = underBase(url) ? `${upstreamBase}${url.slice(PROXY_BASE_PATH.length)}` : url;
    const headers = requestHeaders(request.rawHeaders);
    if (via?.authorization !== undefined) headers.push("Proxy-Authorization", via.authorization);
    const sent = settings.send(
      {
        agent: settings.agent,
        method: this.method,
        ...(via
          ? // The upstream's URL spelled out, so that no path the client sent ("//elsewhere/x") names a host.
            { hostname: via.hostname, port: via.port, path: `${upstream.origin}${upstreamPath}` }
          : { protocol: upstream.protocol, hostname, port: upstream.port, path: upstreamPath }),
        headers,
        ...settings.tls,
      },
      this.guard((incoming: IncomingMessage) => this.onUpstreamHead(incoming)),
    );
    this.#outgoing = sent;
    sent.once("socket", (socket: Socket) => this.#whenConnected(socket));
    deadlines.waitFor(sent, this.begun);
    this.#watch(sent);
    const { "content-length": length, "transfer-encoding": chunked } = request.headers;
    if ((length !== undefined && length !== "0") || chunked !== undefined) forwardBody(request, sent);
    else {
      // No body to stream: the upstream request ends at once, as most of this API's requests do.
      request.resume();
      sent.end();
    }
    this.response.on(
      "close",
      this.guard(() => {
        this.#clientClosed();
        // An answer already broken off closes the client's connection itself; one that came whole from the
        // upstream is judged whole though its client left while the verdict was coming.
        if (this.response.writableFinished || this.#ending !== undefined) return;
        // What follows is the client's doing, not the upstream's: the exchange ends here as the client's.
        this.#outgoing?.destroy();
        this.#incoming?.destroy();
        this.#breakOff({ brokenOff: CLIENT_LEFT });
      }),
    );
  }

  /**
   * Marks the request as possibly sent once its connection is made: a kept-alive one at once, a TLS one at
   * its handshake's end (nothing of the request is written before it).
   */
  #whenConnected(socket: Socket): void {
    const made = () => {
      this.#connected = true;
    };
    // Only a connection whose requests were answered is kept alive, so one not connecting has shaken hands.
    if (!socket.connecting) made();
    else socket.once("encrypted" in socket ? "secureConnect" : "connect", made);
  }

  /** The request's own ways to fail: a switch of protocol, no answer at all. */
  #watch(sent: http.ClientRequest): void {
    const { deadlines, settings } = this.context;
    // The request asked for no other protocol (the proxy passes no Upgrade on): a switch is no answer.
    sent.on(
      "upgrade",
      this.guard((_incoming: IncomingMessage, socket: Socket) => {
        socket.destroy();
        deadlines.answered(sent);
        this.#invalidAnswer("101 Switching Protocols to a request that asked for no other protocol");
      }),
    );
    // Informational heads before the answer (100 Continue, 103 Early Hints) are a few at most: a stream of
    // them is no answer, and reading it would hold the event loop for as long as the upstream sends.
    let informational = 0;
    sent.on(
      "information",
      this.guard(() => {
        if (++informational <= MOST_INFORMATIONAL_HEADS) return;
        sent.destroy();
        deadlines.answered(sent);
        this.#invalidAnswer(
          `more than ${MOST_INFORMATIONAL_HEADS} informational (1xx) heads before its answer`,
        );
      }),
    );
    sent.on(
      "error",
      this.guard((error: NodeJS.ErrnoException) => {
        deadlines.answered(sent);
        if (this.response.headersSent || this.#over) return;
        const reason = error.code ? `${error.code}: ${error.message}` : error.message;
        this.#abort(
          502,
          "upstream_unreachable",
          settings.hide(`the proxy got no answer from the upstream ${settings.upstream.origin}: ${reason}`),
          { upstreamError: settings.hide(reason) },
        );
      }),
    );
  }

  /** An answer that cannot be passed on: the client gets a whole 502 instead. */
  #invalidAnswer(why: string): void {
    const { hide, upstream } = this.context.settings;
    this.#abort(
      502,
      "upstream_invalid_answer",
      hide(`the upstream ${upstream.origin} gave an answer HTTP cannot carry: ${why}`),
      { upstreamError: hide(`an answer HTTP cannot carry: ${why}`) },
    );
  }

  /** Ends the exchange at once, whatever state it is in: the client gets its status if nothing was answered. */
  #abort(status: number, code: string, message: string, how: ExchangeEnd): void {
    this.#incoming?.destroy();
    this.#outgoing?.destroy();
    if (!this.response.headersSent && !this.response.destroyed)
      sendError(this.response, status, { code, message });
    else this.response.destroy();
    this.#breakOff(how);
  }

  /**
   * Ends an exchange whose answer is not whole: once its answer had begun, the taps add what came of it
   * first, so that what was received is judged in part. A second end while they do (the deadline) ends it
   * at once.
   */
  #breakOff(end: ExchangeEnd): void {
    if (end.brokenOff === undefined || this.#incoming === undefined || this.#ending !== undefined) {
      this.#finish(end);
      return;
    }
    this.#ending = "broken";
    end.answeredAt = performance.now();
    this.#endTaps(end, 0);
  }

  /** Every part of the exchange runs through this, its taps' listeners too: a throw ends the exchange, never the process. */
  guard<A extends unknown[]>(part: (...args: A) => void): (...args: A) => void {
    return (...args: A) => {
      try {
        part(...args);
      } catch (error) {
        this.fault(error);
      }
    };
  }

  #finish(end: ExchangeEnd): void {
    if (this.#over) return;
    this.#over = true;
    this.context.over(this);
    let outcome: ExchangeOutcome;
    try {
      outcome = this.#outcomeOf(end);
    } catch (error) {
      // The outcome itself could not be built: handed on all the same, as a fault, so that it is counted.
      const fault = this.context.settings.hide(`the proxy failed on this exchange: ${messageOf(error)}`);
      outcome = this.#outcomeOf({ fault });
    }
    try {
      this.context.done(outcome);
    } finally {
      for (const tap of this.#taps) tap.onRelease?.();
    }
  }

  #outcomeOf(end: ExchangeEnd): ExchangeOutcome {
    const { answer, upstreamError } = end;
    const { request, url, method } = this;
    const { secretNames } = this.context.settings;
    const forwarded: ForwardedExchange = {
      seq: this.number,
      method,
      url,
      ...(this.routed ? { routed: this.routed } : {}),
      ...(this.overridden.length > 0 ? { overridden: this.overridden } : {}),
      token: end.fault === undefined ? bearerToken(request.headers.authorization) : undefined,
      secrets: end.fault === undefined ? requestSecrets(request.rawHeaders, url, secretNames) : [],
      session: headerText(request.headers["x-mock-session"]),
      recorded: () => this.#record(),
      startedAt: this.startedAt,
      durationMs: (end.answeredAt ?? performance.now()) - this.begun,
    };
    if (answer) forwarded.response = new LazyResponse(answer.status, answer.incoming, answer.body);
    const notJudged = end.notJudged ?? answer?.body.notJudged;
    if (notJudged !== undefined) forwarded.notJudged = notJudged;
    // A body past a limit, or judging past the deadline: not the traffic's doing, and not a check passed.
    if ((end.notJudged === undefined && notJudged !== undefined) || end.overLimit) forwarded.overLimit = true;
    if (upstreamError !== undefined) forwarded.upstreamError = upstreamError;
    if (end.cutOff !== undefined) forwarded.cutOff = end.cutOff;
    if (end.sentStatus !== undefined) forwarded.sentStatus = end.sentStatus;
    if (end.unheld !== undefined) forwarded.unheld = end.unheld;
    if (end.fault !== undefined) forwarded.fault = end.fault;
    if (end.brokenOff !== undefined) forwarded.brokenOff = end.brokenOff;
    if (!this.#connected && answer === undefined) forwarded.neverSent = true;
    const outcome: ExchangeOutcome = { forwarded, ...(end.reply ? { answer: end.reply } : {}) };
    for (const tap of this.#taps) tap.onFinish?.(end, outcome);
    return outcome;
  }

  // Reports show the request only when a check fails: its masked headers are made then.
  #record(): RecordedRequest {
    const { secretNames } = this.context.settings;
    this.#recorded ??= {
      method: this.method,
      path: maskedTarget(this.url, secretNames),
      headers: maskHeaders(flattenHeaders(this.request.headers), secretNames),
    };
    return this.#recorded;
  }
}

/**
 * A request's body streamed on to the upstream. Cut by its client, even once answered (an upstream may
 * answer before it reads a body), the upstream request is ended too: it would wait for the rest, holding its
 * connection past the client's, where no cap on client connections counts it.
 */
function forwardBody(request: IncomingMessage, sent: ClientRequest): void {
  request.pipe(sent);
  // Node's server tells an answered request nothing of its connection's end: the socket says it.
  const { socket } = request;
  const cut = () => {
    if (!request.complete) sent.destroy();
  };
  socket.once("close", cut);
  // A kept-alive connection carries many requests: each one's listener goes with it.
  const forget = () => socket.off("close", cut);
  request.once("end", forget);
  sent.once("close", forget);
}

/** Whether a target is under the proxy's base path, which is forwarded under the upstream's. */
function underBase(url: string): boolean {
  return (
    url === PROXY_BASE_PATH || url.startsWith(`${PROXY_BASE_PATH}/`) || url.startsWith(`${PROXY_BASE_PATH}?`)
  );
}

/**
 * The operation a request is for as the upstream gets it. A spelling of the base path itself (`/V1/…`,
 * `//v1/…`) is forwarded as it came, not under the upstream's base: when that base is another path, it
 * reaches no operation of the upstream's API.
 */
function routedAsForwarded(context: ExchangeContext, method: string, url: string): Routed | undefined {
  const routed = context.settings.route(method, url);
  if (routed === undefined || routed.spelling === "exact" || context.upstreamBase === PROXY_BASE_PATH)
    return routed;
  return underBase(url) ? routed : undefined;
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
  readonly undecodable?: true;
  readonly startOnly?: true;
  #headers: Record<string, string> | undefined;
  #body: string | undefined;

  constructor(
    readonly status: number,
    private readonly incoming: IncomingMessage,
    outcome: BodyOutcome,
  ) {
    this.contentType = contentTypeOfRaw(incoming.rawHeaders) ?? "";
    this.bytes = outcome.decoded;
    this.received = outcome.received;
    if (outcome.list) this.list = outcome.list;
    if (outcome.cut !== undefined) this.cut = outcome.cut;
    if (outcome.undecodable) this.undecodable = true;
    if (outcome.startOnly) this.startOnly = true;
  }

  get headers(): Record<string, string> {
    this.#headers ??= flattenHeaders(this.incoming.headersDistinct);
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

export function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
