import type { Routed } from "../../contract/operations.ts";
import type { Exchange } from "../judging/exchange.ts";
import { ListJudge, type ListVerdict } from "../judging/list-judge.ts";
import { isCancelOperation, isListOperation } from "../judging/operation-traits.ts";
import { type CheckedResponse, checkResponse, type RecordValidators } from "../judging/response-checks.ts";
import type { CheckResult, RecordedRequest } from "../reports/report.ts";
import { PROXY_BASE_PATH } from "./defaults.ts";
import type { Expectation, LiveRequest, RequestReading } from "./expectation.ts";
import { isWriteOutsideContract, mayHaveTakenEffect } from "./state-rules/barrier.ts";
import type { NotOrdersPaths } from "./state-rules/not-orders-paths.ts";
import type { ExchangeRef, StateFinding, TrafficState } from "./state-rules.ts";

/** One exchange through the proxy, as it was forwarded. */
export interface ForwardedExchange {
  seq: number;
  method: string;
  /** The path and query the client asked the proxy for. */
  url: string;
  /** The operation its path spells, routed once at the proxy's edge; absent for a path of none. */
  routed?: Routed;
  /**
   * Other methods its method overrides name (method-override.ts), each with the operation it spells with
   * the path: the upstream may have served the request as any of them.
   */
  overridden?: readonly MethodOverride[];
  /** The bearer token of the client's request, for the checks and the state views; never shown. */
  token: string | undefined;
  /** Every credential the request carried (headers, query), to hide wherever a server echoes one. */
  secrets: string[];
  session: string | undefined;
  /** The request as reports show it, headers masked: made only for a report that shows it. */
  recorded: () => RecordedRequest;
  /** When the request came in, in ms from the proxy's start. */
  startedAt: number;
  durationMs: number;
  /**
   * The upstream's answer, its body decoded from any Content-Encoding; absent when there was none. Its
   * headers and body text are made when first read: an answer the same as the last is compared as bytes.
   */
  response?: NonNullable<Exchange["response"]> & { bytes: Buffer; contentType: string; undecodable?: true };
  upstreamError?: string;
  /**
   * The status the client was sent when the answer broke off after its head went out: the client got that
   * status and a cut body, not the proxy's 502.
   */
  sentStatus?: number;
  /** Forwarded without being judged, and why (a body past --max-body). */
  notJudged?: string;
  /** The reason it was not judged is a limit of the proxy's (memory, body size, deadline), not the traffic's. */
  overLimit?: true;
  /** Still in flight when the proxy stopped: ended there, and why. */
  cutOff?: string;
  /** With --errors, why the answer went on before it was judged (so it could not be replaced). */
  unheld?: string;
  /** A part of the proxy failed on this exchange: it was ended there, not judged, and why. */
  fault?: string;
  /**
   * The exchange ended before its answer was whole (the stop, --deadline, the client leaving, the upstream
   * breaking off): why. `response` then holds what came of the answer, if anything did.
   */
  brokenOff?: string;
  /** No connection to the upstream was ever made for it (refused, no such host, cut before): it changed nothing. */
  neverSent?: true;
}

/** A method a request's method override names, and the operation it spells with the request's path. */
export interface MethodOverride {
  method: string;
  routed?: Routed;
}

/** One exchange with the suite's verdict on it. */
export interface JudgedExchange {
  ref: ExchangeRef;
  method: string;
  /** The path without its query. */
  pathname: string;
  status?: number;
  durationMs: number;
  /** The contract's operation; absent when the exchange was forwarded without being judged. */
  operation?: string;
  notJudged?: string;
  /** Not judged for a limit of the proxy's: a gate (--fail-on-violation) that had one does not pass. */
  overLimit?: true;
  checks: CheckResult[];
  findings: StateFinding[];
  upstreamError?: string;
  /** The operation its path routed to, when the upstream gave it no whole answer (upstreamError). */
  unansweredOperation?: string;
  /** The operation its path routed to, when it was forwarded without being judged (a limit, a coding). */
  unjudgedOperation?: string;
  /** The status the client was sent before the answer broke off: its body was cut. */
  sentStatus?: number;
  /** The answer was replaced by a 502 naming the violation (--errors). */
  replaced?: boolean;
  /** Still in flight when the proxy stopped. */
  cutOff?: boolean;
  /** With --errors, why the answer went on before it was judged. */
  unheld?: string;
  /** A part of the proxy failed on this exchange. */
  fault?: boolean;
  /**
   * It ended without a whole answer, and why: judged in part at most, never whole. What the part that came
   * breaks is a failure all the same.
   */
  brokenOff?: string;
  exchange: Exchange;
  /** What the upstream answered, as bytes. */
  answer?: ForwardedExchange["response"];
}

interface PassedAnswer {
  contentType: string;
  bytes: Buffer;
  checks: CheckResult[];
  checked: CheckedResponse;
}

export interface JudgeContext {
  read: (request: LiveRequest) => RequestReading | undefined;
  validators: RecordValidators;
  state: TrafficState;
  /**
   * Whether a cancel of this order is on its way through the proxy, not yet answered, sent before
   * `instant` (the end of the exchange being judged: one sent after cannot have come before it).
   */
  cancelInFlight?: (orderId: string, instant: number) => boolean;
  /** Paths whose writes touch no order (--not-orders): no barrier there. */
  notOrders?: NotOrdersPaths;
  /** The last answer that passed every check, per expectation and status (see `judgeResponse`). */
  passed: Map<Expectation, Map<number, PassedAnswer>>;
}

/**
 * An exchange as the suite's checks read it; the request's masked copy is made only if a check shows it.
 * A class, not an object literal with a getter: V8 keeps such literals alive through young-generation
 * collections, which under load cost the proxy more than all its checks.
 */
class LiveExchange implements Exchange {
  readonly #forwarded: ForwardedExchange;
  readonly response?: Exchange["response"];
  readonly error?: string;

  constructor(forwarded: ForwardedExchange, response: Exchange["response"] = forwarded.response) {
    this.#forwarded = forwarded;
    if (response) this.response = response;
    if (forwarded.upstreamError !== undefined) this.error = forwarded.upstreamError;
  }

  get request(): RecordedRequest {
    return this.#forwarded.recorded();
  }
}

/**
 * The suite's checks applied to one live exchange: the response checks with the expectation the suite
 * would have of the request, then the state rules over what the traffic showed before.
 */
export function judgeExchange(forwarded: ForwardedExchange, context: JudgeContext): JudgedExchange {
  const queryAt = forwarded.url.indexOf("?");
  const pathname = queryAt === -1 ? forwarded.url : forwarded.url.slice(0, queryAt);
  const judged = judgedShell(forwarded, pathname);
  if (writesOutsideContract(forwarded)) barrierAt(forwarded, pathname, judged, context);
  if (forwarded.overridden !== undefined)
    return judgeOverridden(forwarded, forwarded.overridden, pathname, judged, context);
  const declined = declinedSpelling(forwarded);
  const notJudged = unjudgeable(forwarded, pathname, judged) ?? declined;
  if (notJudged !== undefined) {
    judged.notJudged = notJudged;
    // A variant spelling the upstream refused (4xx) is no cancel; one it redirected (3xx: a 303 follows a
    // write carried out) may have been.
    if (declined === undefined || redirected(forwarded)) unjudgedCancel(forwarded, judged, context);
    return judged;
  }
  const { routed } = forwarded;
  const reading = routed && context.read({ routed, hasQuery: queryAt !== -1, token: forwarded.token });
  if (forwarded.brokenOff !== undefined) return judgeBrokenOff(forwarded, judged, reading, context);
  if (judged.upstreamError !== undefined) {
    // A cancel with no answer may still have taken effect: the state rules hold it as undecided.
    if (reading && isCancelOperation(reading.expectation.operation))
      judged.findings = cancelFindings(forwarded, reading, null, judged.ref, context);
    return judged;
  }
  if (!reading) {
    judged.notJudged = "no operation of openapi.yaml";
    return judged;
  }
  const { expectation } = reading;
  const checked = judgeResponse(judged.exchange, forwarded.response, expectation, context);
  judged.operation = expectation.operation.operationId;
  judged.checks = checked.checks;
  judged.findings = stateFindings(forwarded, judged, reading, checked.list, context);
  return judged;
}

/**
 * A write the contract has no operation for, in any path, that may have taken effect: a barrier to the
 * state rules (state-rules/barrier.ts), unless its path is one named as holding no orders. The exchange
 * itself is forwarded and counted, not judged.
 */
function barrierAt(
  forwarded: ForwardedExchange,
  pathname: string,
  judged: JudgedExchange,
  context: JudgeContext,
): void {
  const status = statusOf(forwarded);
  if (forwarded.neverSent || !mayHaveTakenEffect(status)) return;
  const overrides = forwarded.overridden?.map((override) => override.method).join(", ");
  const what = `#${forwarded.seq} ${forwarded.method} ${pathname}${overrides ? ` (method override: ${overrides})` : ""}`;
  if (context.notOrders?.covers(pathname)) context.state.notOrdersWrite(what);
  else context.state.barrier(judged.ref, what, { unanswered: status === undefined });
}

/** Whether the request, as its own method or as one its method overrides name, is a write outside the contract. */
function writesOutsideContract(forwarded: ForwardedExchange): boolean {
  if (isWriteOutsideContract(forwarded.method, forwarded.routed)) return true;
  return forwarded.overridden?.some(({ method, routed }) => isWriteOutsideContract(method, routed)) ?? false;
}

/**
 * A request with a method override is not judged as the operation its own method spells: the upstream may
 * have served it as another. Each reading of it as a cancel, its own or an override's, is a cancel that may
 * or may not have been carried out, unless the upstream refused it as it came (4xx), as it would have
 * whichever method it followed.
 */
function judgeOverridden(
  forwarded: ForwardedExchange,
  overridden: readonly MethodOverride[],
  pathname: string,
  judged: JudgedExchange,
  context: JudgeContext,
): JudgedExchange {
  const methods = overridden.map((override) => override.method).join(", ");
  judged.notJudged =
    unjudgeable(forwarded, pathname, judged) ??
    `its method override names ${methods}, which the upstream may have followed instead of ${forwarded.method}`;
  if (!mayHaveTakenEffect(statusOf(forwarded))) return judged;
  unjudgedCancel(forwarded, judged, context);
  for (const { routed } of overridden) if (routed) unjudgedCancel(forwarded, judged, context, routed);
  return judged;
}

/**
 * Why an exchange is not judged when its path spells an operation other than exactly and the upstream
 * declined that spelling: a redirect, or an answer that says no route took it (400, 403, 404, 405, 414,
 * 501). Servers differ in what they normalize, an equivalent spelling included. Any other answer is the
 * operation's: a 2xx, a 409, a 5xx (which says nothing of routing: a cancel may have been carried out);
 * one with no answer may have been carried out too.
 */
function declinedSpelling(forwarded: ForwardedExchange): string | undefined {
  const { routed } = forwarded;
  if (routed === undefined || routed.spelling === "exact") return undefined;
  const status = statusOf(forwarded);
  if (status === undefined || !(NO_ROUTE.has(status) || redirected(forwarded))) return undefined;
  const { method, path } = routed.operation;
  return `a spelling of ${method} ${PROXY_BASE_PATH}${path} the contract does not have (${routed.differs}); the upstream answered ${status}`;
}

/** The status the upstream answered, or the one the client was sent before the answer broke off. */
function statusOf(forwarded: ForwardedExchange): number | undefined {
  return forwarded.response?.status ?? forwarded.sentStatus;
}

function redirected(forwarded: ForwardedExchange): boolean {
  const status = statusOf(forwarded);
  return status !== undefined && status >= 300 && status < 400;
}

/**
 * Answers that say no route took the request. A 403 is one for a spelling: WAFs and nginx rules refuse
 * `;`, `//`, `..` and `\` before any route is read, and the operation itself answers a key it refuses
 * with 401 (§5), never 403.
 */
const NO_ROUTE = new Set([400, 403, 404, 405, 414, 501]);

/** The exchange as its verdict starts: built once and filled in, since this runs on the proxy's hot path. */
function judgedShell(forwarded: ForwardedExchange, pathname: string): JudgedExchange {
  const status = forwarded.response?.status;
  const { sentStatus } = forwarded;
  const cut = status !== undefined && forwarded.brokenOff !== undefined;
  const answered = cut
    ? `${status}, body cut`
    : (status ?? (sentStatus === undefined ? "no answer" : `${sentStatus}, body cut`));
  const judged: JudgedExchange = {
    ref: {
      seq: forwarded.seq,
      label: `#${forwarded.seq} ${forwarded.method} ${pathname} → ${answered}`,
      startedAt: forwarded.startedAt,
      endedAt: forwarded.startedAt + forwarded.durationMs,
    },
    method: forwarded.method,
    pathname,
    durationMs: forwarded.durationMs,
    checks: [],
    findings: [],
    exchange: new LiveExchange(forwarded),
  };
  if (status !== undefined) judged.status = status;
  else if (sentStatus !== undefined) judged.sentStatus = sentStatus;
  if (forwarded.response) judged.answer = forwarded.response;
  if (forwarded.unheld !== undefined) judged.unheld = forwarded.unheld;
  return judged;
}

const NOT_MODIFIED = "a 304 to a conditional request: the client reads its cached copy";

/**
 * A 304 to a conditional GET or HEAD (If-None-Match, If-Modified-Since, which browsers send on their own):
 * HTTP lets any server answer one so whatever the API documents (RFC 9110 §13.1, §15.4.5), and it shows no
 * list. A 304 to a request that asked for none is the upstream's own and is judged.
 */
function notModifiedAsAsked(forwarded: ForwardedExchange): boolean {
  if (statusOf(forwarded) !== 304 || (forwarded.method !== "GET" && forwarded.method !== "HEAD"))
    return false;
  const { headers } = forwarded.recorded();
  return headers["if-none-match"] !== undefined || headers["if-modified-since"] !== undefined;
}

/**
 * Why the exchange is not judged at all (a fault, outside /v1, a preflight, a body past a limit…); an
 * upstream error and a cut-off are noted, and an answer broken off is left to `judgeBrokenOff`.
 */
function unjudgeable(
  forwarded: ForwardedExchange,
  pathname: string,
  judged: JudgedExchange,
): string | undefined {
  if (forwarded.fault !== undefined) {
    judged.fault = true;
    return forwarded.fault;
  }
  if (forwarded.cutOff !== undefined) judged.cutOff = true;
  if (forwarded.upstreamError !== undefined) {
    judged.upstreamError = forwarded.upstreamError;
    if (forwarded.routed) judged.unansweredOperation = forwarded.routed.operation.operationId;
  }
  if (!forwarded.routed && pathname !== PROXY_BASE_PATH && !pathname.startsWith(`${PROXY_BASE_PATH}/`))
    return forwarded.cutOff ?? `outside ${PROXY_BASE_PATH}`;
  if (forwarded.method === "OPTIONS") return forwarded.cutOff ?? "CORS preflight";
  if (notModifiedAsAsked(forwarded)) return forwarded.cutOff ?? NOT_MODIFIED;
  if (forwarded.overLimit) judged.overLimit = true;
  if (forwarded.notJudged !== undefined) {
    // Not judged at all, broken off or not: a body past a limit, or one the proxy could not judge.
    if (forwarded.brokenOff !== undefined) judged.brokenOff = forwarded.brokenOff;
    if (forwarded.routed) judged.unjudgedOperation = forwarded.routed.operation.operationId;
    return forwarded.notJudged;
  }
  return undefined;
}

/**
 * An exchange that ended without a whole answer. A list answered 200 is judged on the orders that came
 * whole: what they break is a failure of the exchange whatever ended it, said with the same words as of a
 * whole list, and nothing is said of the rest (the state rules compare whole lists only). Anything else is
 * not judged. Either way it was not judged whole, which a gate does not pass.
 */
function judgeBrokenOff(
  forwarded: ForwardedExchange,
  judged: JudgedExchange,
  reading: RequestReading | undefined,
  context: JudgeContext,
): JudgedExchange {
  const why = forwarded.brokenOff as string;
  if (!reading) {
    judged.notJudged = forwarded.cutOff ?? "no operation of openapi.yaml";
    return judged;
  }
  judged.brokenOff = why;
  const { response } = forwarded;
  const { expectation } = reading;
  const verdict =
    response?.status === 200 && isListOperation(expectation.operation)
      ? receivedPart(response, why, context.validators)
      : undefined;
  if (!response) {
    judged.notJudged = forwarded.cutOff ?? `the answer was not whole: ${why}`;
    unjudgedCancel(forwarded, judged, context);
    return judged;
  }
  if (verdict === undefined || response.undecodable)
    return judgeHead(forwarded, judged, expectation, context);
  const exchange = new LiveExchange(forwarded, new ReceivedPart(response, verdict));
  const checked = responseChecks(exchange, expectation, context.validators);
  judged.exchange = exchange;
  judged.operation = expectation.operation.operationId;
  judged.checks = checked.checks.map((check) =>
    check.status === "failed" && !check.message.includes("(judged in part: ")
      ? { ...check, message: `${check.message} (judged in part: ${verdict.partial})` }
      : check,
  );
  return judged;
}

/** The checks an answer's head alone decides: a status or a Content-Type is wrong however its body ends. */
const HEAD_CHECKS = new Set(["status", "content-type"]);
/** The same with the body's, for a body that failed to decode on what came: the body check says so. */
const HEAD_AND_BODY_CHECKS = new Set([...HEAD_CHECKS, "body", "no-body"]);

/**
 * An answer broken off that is no list to judge in part, or whose body failed to decode on what came: its
 * head is judged (a 500 or an undocumented 404 fails whatever came after it), its body only for failing to
 * decode, and a cancel stays one that may have taken effect.
 */
function judgeHead(
  forwarded: ForwardedExchange,
  judged: JudgedExchange,
  expectation: Expectation,
  context: JudgeContext,
): JudgedExchange {
  // A body that failed to decode on what came is no body of its encoding, however it would have ended.
  const undecodable = forwarded.response?.undecodable === true;
  const judgedHere = undecodable ? HEAD_AND_BODY_CHECKS : HEAD_CHECKS;
  const part = `the answer was not whole (${forwarded.brokenOff}): its status and headers${undecodable ? " and its encoding" : ""} were judged`;
  const checked = responseChecks(judged.exchange, expectation, context.validators);
  judged.operation = expectation.operation.operationId;
  judged.checks = checked.checks
    .filter((check) => judgedHere.has(check.id.slice(check.id.lastIndexOf(".") + 1)))
    .map((check) =>
      check.status === "failed" ? { ...check, message: `${check.message} (judged in part: ${part})` } : check,
    );
  const body = `${expectation.operation.operationId}.body`;
  if (!undecodable)
    judged.checks.push({ id: body, status: "skipped", message: `not judged: ${part}`, notJudged: true });
  unjudgedCancel(forwarded, judged, context);
  return judged;
}

/**
 * The verdict on the orders of a list that came whole before its answer broke off; undefined when the
 * checks have no Order validator to judge them with.
 */
function receivedPart(
  response: NonNullable<ForwardedExchange["response"]>,
  why: string,
  validators: RecordValidators,
): ListVerdict | undefined {
  const reason = `the answer was not whole (${why})`;
  const streamed = response.list;
  if (streamed !== undefined) {
    if (streamed.partial !== undefined) return streamed;
    // The judge read the list to where it broke off: the end it met there is the cut's, not the body's.
    const { syntax, ...rest } = streamed;
    const partial = `${reason}: the orders in its first ${streamed.bytes} bytes were judged`;
    return syntax === undefined || endsWithTheCut(syntax, streamed.bytes) ? { ...rest, partial } : streamed;
  }
  if (!validators.orderRecord) return undefined;
  const judge = new ListJudge({
    validateOrder: validators.orderRecord,
    orderPlan: validators.orderPlan,
    ...validators.readerLimits,
  });
  judge.write(response.bytes);
  return judge.endPartial(reason);
}

/** Whether the reader's complaint is only that the text ended where the answer broke off. */
function endsWithTheCut(syntax: string, bytes: number): boolean {
  return syntax.endsWith(` at byte ${bytes}`) || syntax.endsWith("is cut short by the end");
}

/** What came of an answer broken off, as the checks read it: its list's verdict on the part that came. */
class ReceivedPart {
  readonly status: number;
  readonly received: number;
  readonly bodyBytes: Uint8Array;
  readonly notUtf8 = undefined;

  constructor(
    readonly answer: NonNullable<ForwardedExchange["response"]>,
    readonly list: ListVerdict,
  ) {
    this.status = answer.status;
    this.received = answer.received ?? answer.bytes.length;
    this.bodyBytes = answer.bytes;
  }

  get headers(): Record<string, string> {
    return this.answer.headers;
  }

  get body(): string {
    return this.answer.body;
  }
}

/**
 * A DELETE of an order that was forwarded but not judged (its client left, the proxy stopped or failed on
 * it) may have cancelled the order upstream: the state holds it as a cancel whose effect is undecided, so
 * that a later list without the order is no finding. Asked only of a spelling the upstream did not
 * decline. Not judged, it carries no finding of its own.
 */
function unjudgedCancel(
  forwarded: ForwardedExchange,
  judged: JudgedExchange,
  context: JudgeContext,
  routed = forwarded.routed,
): void {
  if (!routed || !isCancelOperation(routed.operation)) return;
  const reading = context.read({ routed, hasQuery: false, token: forwarded.token });
  if (!reading || !isCancelOperation(reading.expectation.operation)) return;
  try {
    cancelFindings(forwarded, reading, null, judged.ref, context);
  } catch (error) {
    // The exchange stays not judged; the reason says the state could not take it either.
    judged.notJudged = `${judged.notJudged}; the state rules could not take it as a cancel: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** What the state rules find in this exchange: a whole list seen, or a cancel answered as documented. */
function stateFindings(
  forwarded: ForwardedExchange,
  judged: JudgedExchange,
  reading: RequestReading,
  list: ListVerdict | undefined,
  context: JudgeContext,
): JudgedExchange["findings"] {
  const { operation } = reading.expectation;
  const { status, ref } = judged;
  const { view, session } = viewOf(forwarded);
  // A list answered 200 is the whole list, parameters or not (§4.1: it has none to narrow it by).
  if (isListOperation(operation) && status === 200 && view !== undefined && forwarded.response) {
    if (!list || list.syntax !== undefined || list.limit !== undefined || list.notArray) return [];
    const notWhole =
      list.partial !== undefined
        ? { judgedInPart: true as const }
        : list.unindexed === 0
          ? undefined
          : { unindexed: list.unindexed };
    return context.state.observe({
      kind: "list",
      view,
      session,
      // A list judged as it streamed kept only its start: not the whole list to compare bytes with.
      bytes: forwarded.response.list === undefined ? forwarded.response.bytes : undefined,
      orders: () => ({ index: list.orders, ...(list.allRecords ? { records: list.records } : {}) }),
      cancelInFlight: inFlightDuring(context, ref),
      ...(notWhole ? { notWhole } : {}),
      notCompared: notComparedIn(judged, operation.operationId),
      at: ref,
    });
  }
  if (isCancelOperation(operation)) {
    // A status the contract does not list for a cancel (a 5xx, a 429) says nothing of its effect.
    const documented = status !== undefined && operation.responses.has(status) ? status : null;
    return cancelFindings(forwarded, reading, documented, ref, context, judged);
  }
  return [];
}

/** Says in a check not judged, which a gate does not pass, why the state rules compared the exchange with nothing. */
function notComparedIn(judged: JudgedExchange, operationId: string): (why: string) => void {
  return (message) =>
    judged.checks.push({ id: `${operationId}.state`, status: "skipped", message, notJudged: true });
}

/**
 * The view of the store an exchange belongs to: its key and its mock session. The token itself keys the
 * view in memory; it is never written anywhere.
 */
function viewOf(forwarded: ForwardedExchange): { view: string | undefined; session: string } {
  const session = forwarded.session ?? "";
  const { token } = forwarded;
  if (token === undefined) return { view: undefined, session };
  // The same key and session as the last exchange's give the same string, already hashed as a map's key.
  if (token !== lastView.token || session !== lastView.session)
    lastView = { token, session, view: `${token}\n${session}` };
  return lastView;
}

let lastView = { token: "", session: "", view: "\n" };

/**
 * Whether a cancel (or a write outside the contract) was in flight while the exchange was: sent before its
 * answer was over. Asked when the verdict comes, which for a large list may be long after.
 */
function inFlightDuring(context: JudgeContext, at: ExchangeRef): ((orderId: string) => boolean) | undefined {
  const { cancelInFlight } = context;
  return cancelInFlight && ((orderId) => cancelInFlight(orderId, at.endedAt));
}

/**
 * What the state rules find in a cancel answered with `status`, or null when its effect is undecided;
 * `judged`, when given, is told of a decided cancel the rules could not judge.
 */
function cancelFindings(
  forwarded: ForwardedExchange,
  reading: RequestReading,
  status: number | null,
  at: ExchangeRef,
  context: JudgeContext,
  judged?: JudgedExchange,
): JudgedExchange["findings"] {
  if (reading.orderId === undefined) return [];
  const { view, session } = viewOf(forwarded);
  return context.state.observe({
    kind: "cancel",
    view,
    session,
    orderId: reading.orderId,
    status,
    cancelInFlight: inFlightDuring(context, at),
    ...(judged ? { notCompared: notComparedIn(judged, reading.expectation.operation.operationId) } : {}),
    at,
  });
}

/**
 * The suite's response checks. An answer identical to the last one that passed them all, for the same
 * operation, status and reading, passes them again without being parsed: lists polled again and again
 * cost a comparison of their text, and any difference is judged in full.
 */
function judgeResponse(
  exchange: Exchange,
  response: ForwardedExchange["response"],
  expectation: Expectation,
  context: JudgeContext,
): CheckedResponse {
  if (!response) return responseChecks(exchange, expectation, context.validators);
  let byStatus = context.passed.get(expectation);
  const last = byStatus?.get(response.status);
  // Only an answer kept whole can be the same as the last: a list judged as it streamed was judged already.
  const whole = response.list === undefined;
  if (whole && last && last.contentType === response.contentType && last.bytes.equals(response.bytes)) {
    return last.checked;
  }
  const checked = responseChecks(exchange, expectation, context.validators);
  if (whole && checked.checks.every((check) => check.status === "passed")) {
    if (!byStatus) {
      byStatus = new Map();
      context.passed.set(expectation, byStatus);
    }
    byStatus.set(response.status, {
      contentType: response.contentType,
      // A copy: the answer's bytes may share their memory with the rest of what the socket read.
      bytes: Buffer.from(response.bytes),
      checks: checked.checks,
      checked,
    });
  }
  return checked;
}

/** The suite's response checks on an exchange, with what the spec lets its request be answered with. */
function responseChecks(
  exchange: Exchange,
  { operation, expect, because }: Expectation,
  validators: RecordValidators,
): CheckedResponse {
  return checkResponse(exchange, operation, expect, because, operation.operationId, validators);
}

/** Whether the exchange broke the contract or a state rule. */
export function violates(judged: JudgedExchange): boolean {
  return judged.findings.length > 0 || judged.checks.some((check) => check.status === "failed");
}
