import type { IncomingMessage } from "node:http";
import type {
  Exchange,
  ExchangeEnd,
  ExchangeOutcome,
  ExchangeTap,
  UpstreamAnswer,
} from "./exchange-lifecycle.ts";
import { forwardedResponseHeaders, pairsOf } from "./forward-headers.ts";
import type { BodyOutcome, RequestBodyTap } from "./forwarded-body.ts";
import type { HarSource } from "./har-entry.ts";

export type { UpstreamAnswer } from "./exchange-lifecycle.ts";

// What the HAR keeps of an exchange as the forwarder passes it on: the request's body as it went to the
// upstream (its first mebibyte, as the request body's one reading kept it), and the facts of both messages
// once the exchange is over.

/** The HAR's tap on an exchange: the facts of both messages, with the body the request's tap kept. */
export class HarTap implements ExchangeTap {
  #exchange: Exchange | undefined;

  constructor(readonly requestBody: RequestBodyTap) {}

  onRequest(exchange: Exchange): void {
    this.#exchange = exchange;
  }

  /** An exchange the proxy failed on is counted in the report, and not written to the HAR. */
  onFinish(end: ExchangeEnd, outcome: ExchangeOutcome): void {
    const exchange = this.#exchange;
    if (end.fault !== undefined || exchange === undefined) return;
    outcome.har = harSource({
      begunAt: exchange.begunAt,
      durationMs: outcome.forwarded.durationMs,
      waitMs: exchange.waitMs,
      method: exchange.method,
      url: exchange.checked.url,
      request: exchange.request,
      requestChunks: this.requestBody.chunks,
      requestBodySize: this.requestBody.size,
      answer: end.answer,
      upstreamError: end.upstreamError,
      extra: end,
    });
  }
}

/** What the HAR writer needs of an exchange: both messages as they went, and why one is short, if it is. */
export interface HarFacts {
  begunAt: number;
  durationMs: number;
  waitMs: number;
  method: string;
  /** The request's address as checked at the proxy's edge. */
  url: URL;
  request: IncomingMessage;
  requestChunks: readonly Buffer[];
  /** The request body's bytes in all, kept or not. */
  requestBodySize: number;
  answer: UpstreamAnswer | undefined;
  upstreamError: string | undefined;
  extra: { cutOff?: string; unheld?: string; fault?: string } | undefined;
}

export function harSource(facts: HarFacts): HarSource {
  const { answer, upstreamError, extra, request } = facts;
  const decoded = answer?.body.decoded;
  const requestBody = Buffer.concat(facts.requestChunks);
  return {
    startedAt: facts.begunAt,
    durationMs: facts.durationMs,
    waitMs: facts.waitMs,
    method: facts.method,
    url: facts.url,
    requestHeaders: pairsOf(request.rawHeaders),
    requestBody,
    ...(facts.requestBodySize > requestBody.length ? { requestBodyCut: true } : {}),
    ...(answer && decoded
      ? {
          response: {
            status: answer.status,
            statusText: answer.statusText,
            headers: pairsOf(forwardedResponseHeaders(answer.incoming.rawHeaders)),
            body: decoded,
            size: answer.size,
            ...(answer.body.whole ? {} : { cut: true }),
          },
        }
      : {}),
    ...(extra?.fault !== undefined
      ? { comment: extra.fault }
      : extra?.cutOff !== undefined
        ? { comment: extra.cutOff }
        : upstreamError !== undefined
          ? { comment: `no answer from the upstream: ${upstreamError}` }
          : answer && !answer.body.whole
            ? { comment: keptComment(answer.body) }
            : {}),
  };
}

/** What the HAR says of a body it holds only the start of. */
function keptComment(body: BodyOutcome): string {
  const stopped = body.cut ?? body.notJudged;
  return stopped === undefined
    ? `only the first ${body.decoded.length} of the body's ${body.received} decoded bytes are kept here`
    : `only the first ${body.decoded.length} decoded bytes of the body are kept here: ${stopped}`;
}
