import type { RecordedRequest, RecordedResponse } from "../reports/report.ts";
import type { ListVerdict } from "./list-judge.ts";

/** Characters of a body kept for a report's excerpt. */
export const EXCERPT_CHARS = 2000;

/** One request and what came back, as the suite and the proxy hand it to the judge. */
export interface Exchange {
  request: RecordedRequest;
  /** Undefined when no response came back; then `error` says why. */
  response?: ExchangeResponse;
  error?: string;
  /** The Node error code of a failure to get any answer (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT, …). */
  errorCode?: string;
  /** The proxy answered the tunnel request with this status instead of opening it. */
  proxyRefused?: number;
  /** How many 429 answers were waited out and retried before this one. */
  retries?: number;
  /** When the request was fully written (performance.now()), to tell how close together requests went out. */
  sentAt?: number;
  /** The request went on a kept-alive connection that the server had closed: it never reached the server. */
  staleConnection?: boolean;
  /** The run's limit that ended it before its answer was whole: reading the same again would hit it again. */
  limit?: "deadline" | "max-body" | "not-read";
}

export interface ExchangeResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as text; for a list judged as it streamed in, only its start (`list` holds the verdict). */
  body: string;
  /** Bytes of body read, after undoing its Content-Encoding. */
  received?: number;
  /** The body's bytes, where they are kept whole anyway (the proxy). */
  readonly bodyBytes?: Uint8Array;
  /** A listOrders body judged order by order as it arrived. */
  list?: ListVerdict;
  /**
   * The body did not arrive whole: why, with the bytes received. It is never judged whole: its check fails
   * when the target cut it, and is not judged when a limit of the run's did (`Exchange.limit`).
   */
  cut?: string;
  /**
   * The body is no list and longer than what is read of such answers: `cut` says so, `body` and `bodyBytes`
   * hold its start, and the checks judge what that start proves, nothing more.
   */
  readonly startOnly?: true;
  /** Why a body that is not a list is not UTF-8, naming the byte; undefined when it is. */
  readonly notUtf8?: string | undefined;
}

export function recordResponse(response: ExchangeResponse): RecordedResponse {
  // The excerpt is copied out: a slice of a string keeps the whole string alive, and every failure a
  // report keeps would hold its whole body (a mebibyte for a large list's start).
  const body =
    response.body.length > EXCERPT_CHARS
      ? `${Buffer.from(response.body.slice(0, EXCERPT_CHARS)).toString()}…`
      : response.body;
  return { status: response.status, headers: response.headers, body };
}
