import type { ValidateFunction } from "ajv";
import type { Operation } from "../../contract/operations.ts";
import type { Exchange } from "../http-client.ts";
import type { CheckResult } from "../report.ts";
import { checkResponse } from "../response-checks.ts";
import { snapshotOf } from "../snapshot.ts";
import { bearerToken, expectationFor } from "./expectation.ts";
import type { ExchangeRef, StateFinding, TrafficState } from "./state-rules.ts";

/** One exchange through the proxy, as it was forwarded. */
export interface ForwardedExchange {
  seq: number;
  method: string;
  /** The path and query the client asked the proxy for. */
  url: string;
  /** The client's headers, for the checks and the state views; reports see them masked. */
  authorization: string | undefined;
  session: string | undefined;
  /** The request as reports show it: headers masked. */
  recorded: Exchange["request"];
  durationMs: number;
  /** The upstream's answer, its body decoded from any Content-Encoding; absent when there was none. */
  response?: NonNullable<Exchange["response"]>;
  upstreamError?: string;
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
  checks: CheckResult[];
  findings: StateFinding[];
  upstreamError?: string;
  /** The answer was replaced by a 502 naming the violation (--errors). */
  replaced?: boolean;
  exchange: Exchange;
}

export interface JudgeContext {
  operations: ReadonlyMap<string, Operation>;
  errorRecord: ValidateFunction;
  strict: boolean;
  state: TrafficState;
}

const BASE_PATH = "/v1";

/**
 * The suite's checks applied to one live exchange: the response checks with the expectation the suite
 * would have of the request, then the state rules over what the traffic showed before.
 */
export function judgeExchange(forwarded: ForwardedExchange, context: JudgeContext): JudgedExchange {
  const queryAt = forwarded.url.indexOf("?");
  const pathname = queryAt === -1 ? forwarded.url : forwarded.url.slice(0, queryAt);
  const query = queryAt === -1 ? "" : forwarded.url.slice(queryAt + 1);
  const status = forwarded.response?.status;
  const ref = {
    seq: forwarded.seq,
    label: `#${forwarded.seq} ${forwarded.method} ${pathname} → ${status ?? "no answer"}`,
  };
  const exchange: Exchange = {
    request: forwarded.recorded,
    ...(forwarded.response ? { response: forwarded.response } : {}),
    ...(forwarded.upstreamError !== undefined ? { error: forwarded.upstreamError } : {}),
  };
  const base = {
    ref,
    method: forwarded.method,
    pathname,
    ...(status !== undefined ? { status } : {}),
    durationMs: forwarded.durationMs,
    checks: [],
    findings: [],
    exchange,
  };
  if (forwarded.upstreamError !== undefined) return { ...base, upstreamError: forwarded.upstreamError };
  if (pathname !== BASE_PATH && !pathname.startsWith(`${BASE_PATH}/`))
    return { ...base, notJudged: "outside /v1" };
  if (forwarded.method === "OPTIONS") return { ...base, notJudged: "CORS preflight" };
  const expectation = expectationFor(
    {
      method: forwarded.method,
      path: pathname.slice(BASE_PATH.length),
      query,
      authorization: forwarded.authorization,
    },
    context.operations,
    context.strict,
  );
  if (!expectation) return { ...base, notJudged: "no operation of openapi.yaml" };

  const { operation } = expectation;
  const checked = checkResponse(
    exchange,
    operation,
    expectation.expect,
    expectation.because,
    operation.operationId,
    context.errorRecord,
  );
  const session = forwarded.session ?? "";
  const token = bearerToken(forwarded.authorization);
  // The token itself keys the view in memory; it is never written anywhere.
  const view = token === undefined ? undefined : `${token}\n${session}`;
  let findings: StateFinding[] = [];
  // A list answered 200 is the whole list, parameters or not (§4.1: it has none to narrow it by).
  if (operation.operationId === "listOrders" && status === 200 && view !== undefined) {
    const orders = snapshotOf(exchange, status, checked.body).orders;
    if (orders) findings = context.state.observe({ kind: "list", view, session, orders, at: ref });
  } else if (
    operation.operationId === "cancelOrder" &&
    expectation.orderId !== undefined &&
    status !== undefined &&
    [204, 401, 404, 409].includes(status)
  ) {
    findings = context.state.observe({
      kind: "cancel",
      view,
      session,
      orderId: expectation.orderId,
      status,
      at: ref,
    });
  }
  return { ...base, operation: operation.operationId, checks: checked.checks, findings };
}

/** Whether the exchange broke the contract or a state rule. */
export function violates(judged: JudgedExchange): boolean {
  return judged.findings.length > 0 || judged.checks.some((check) => check.status === "failed");
}
