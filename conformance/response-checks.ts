import type { ValidateFunction } from "ajv";
import {
  isJsonNumber,
  isLosslessNumber,
  numberText,
  parseExact,
  toSchemaView,
} from "../contract/exact-json.ts";
import type { Operation } from "../contract/operations.ts";
import { type Exchange, recordResponse } from "./http-client.ts";
import type { CheckResult } from "./report.ts";

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export interface CheckedResponse {
  checks: CheckResult[];
  status?: number;
  /** The body parsed exactly (numbers as their source digits), when it was JSON. */
  body?: unknown;
}

/**
 * The checks every response must pass: the expected status, documented for the operation and never 5xx;
 * a JSON Content-Type on JSON bodies; the body valid against openapi.yaml; an Error record's status equal to
 * the HTTP status; no body on 204; and for lists, unique ids and no status field.
 */
export function checkResponse(
  exchange: Exchange,
  operation: Operation,
  expected: readonly number[],
  because: string,
  checkId: string,
  /** The Error record's validator, for expected 4xx statuses that openapi.yaml does not document. */
  errorRecord?: ValidateFunction,
): CheckedResponse {
  const checks: CheckResult[] = [];
  const evidence = () => ({
    request: exchange.request,
    ...(exchange.response ? { response: recordResponse(exchange.response) } : {}),
  });
  const pass = (kind: string, message: string, spec?: string) =>
    checks.push({ id: `${checkId}.${kind}`, status: "passed", message, ...(spec ? { spec } : {}) });
  const fail = (kind: string, message: string, spec?: string) =>
    checks.push({
      id: `${checkId}.${kind}`,
      status: "failed",
      message,
      ...(spec ? { spec } : {}),
      ...evidence(),
    });

  const { response } = exchange;
  if (!response) {
    fail(
      "status",
      `expected ${expected.join(" or ")}, but no response came back: ${exchange.error}`,
      because,
    );
    return { checks };
  }
  const { status } = response;
  // An expected 4xx that openapi.yaml does not document: the lenient reading of input the spec has no case for.
  const tolerated =
    !operation.responses.has(status) &&
    expected.includes(status) &&
    status >= 400 &&
    status < 500 &&
    errorRecord
      ? { status, description: "tolerated", body: errorRecord }
      : undefined;
  const documented = operation.responses.get(status) ?? tolerated;
  const statusProblem =
    status >= 500
      ? "a 5xx is never an acceptable answer"
      : status === 429
        ? `the target kept answering 429 Too Many Requests${exchange.retries ? ` after ${exchange.retries} retries` : ""}: slow the run down with --concurrency 1 or a larger --max-retry-wait`
        : !documented
          ? `openapi.yaml does not document ${status} for ${operation.operationId} (documented: ${[...operation.responses.keys()].join(", ")})`
          : undefined;
  if (expected.includes(status) && !statusProblem) {
    pass("status", `${status} as expected`, because);
  } else {
    fail(
      "status",
      `expected ${expected.join(" or ")}, got ${status}${statusProblem ? `: ${statusProblem}` : ""}`,
      because,
    );
  }
  if (!documented || status >= 500) return { checks, status };

  if (status === 204) {
    if (response.body.length === 0) pass("no-body", "204 carries no body", "§4.2: 204 body: none");
    else
      fail(
        "no-body",
        `204 must carry no body, got ${response.body.length} characters`,
        "§4.2: 204 body: none",
      );
    return { checks, status };
  }
  if (!documented.body) return { checks, status };
  // The 409 body is not shown by the spec: it may be absent, and when present it is an Error record.
  if (status === 409 && response.body.length === 0) {
    pass("body", "409 without a body, which the spec allows", "§4.2: 409 body: not shown");
    return { checks, status };
  }
  if (tolerated && response.body.length === 0) {
    pass("body", `${status} without a body`, "§7: error responses that carry a body use the Error record");
    return { checks, status };
  }

  const contentType = response.headers["content-type"] ?? "";
  const jsonPayloads = "§1, §7: successful and error payloads are JSON";
  if (JSON_CONTENT_TYPE.test(contentType))
    pass("content-type", `JSON Content-Type (${contentType})`, jsonPayloads);
  else
    fail(
      "content-type",
      `a JSON body needs a JSON Content-Type, got ${contentType ? `"${contentType}"` : "none"}`,
      jsonPayloads,
    );

  const schemaSpec =
    status === 200
      ? "§2 Order, §4.1: a JSON array of Order records"
      : "§2 Error, §7: error responses use the Error record";
  let body: unknown;
  try {
    body = parseExact(response.body);
  } catch (error) {
    fail("body", `the body is not valid JSON: ${(error as Error).message}`, schemaSpec);
    return { checks, status };
  }
  const validate = documented.body;
  if (validate(toSchemaView(body))) {
    pass("body", status === 200 ? "an array of Order records" : "an Error record", schemaSpec);
  } else {
    const problems = (validate.errors ?? []).map(
      (error) => `${error.instancePath || "(body)"} ${error.message}`,
    );
    fail("body", `does not match openapi.yaml: ${[...new Set(problems)].slice(0, 5).join("; ")}`, schemaSpec);
  }

  if (status !== 200 && isRecord(body) && "status" in body) {
    const errorStatus = isJsonNumber(body.status) ? numberText(body.status) : JSON.stringify(body.status);
    const rule = "§7: the Error record's status equals the HTTP status";
    if (errorStatus === String(status))
      pass("error-status", `Error status ${errorStatus} equals the HTTP status`, rule);
    else fail("error-status", `Error status is ${errorStatus}, HTTP status is ${status}`, rule);
  }

  if (status === 200 && Array.isArray(body)) checkListInvariants(body, pass, fail);
  return { checks, status, body };
}

function checkListInvariants(
  orders: unknown[],
  pass: (kind: string, message: string, spec: string) => void,
  fail: (kind: string, message: string, spec: string) => void,
): void {
  const unique = "§2: id is the unique order identifier";
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const order of orders) {
    const id = orderIdOf(order);
    if (id === undefined) continue;
    if (seen.has(id)) duplicates.add(id);
    seen.add(id);
  }
  if (duplicates.size === 0) pass("unique-ids", `${seen.size} distinct ids`, unique);
  else fail("unique-ids", `ids listed more than once: ${[...duplicates].slice(0, 10).join(", ")}`, unique);

  const noStatus = "§2: the Order record has no field that carries a status";
  const exposing = orders
    .filter((order) => isRecord(order) && "status" in order)
    .map((order) => orderIdOf(order) ?? "?");
  if (exposing.length === 0) pass("no-status-field", "no Order exposes a status", noStatus);
  else
    fail(
      "no-status-field",
      `orders expose a status field: ids ${exposing.slice(0, 10).join(", ")}`,
      noStatus,
    );
}

/** An order's id as its exact source digits. */
export function orderIdOf(order: unknown): string | undefined {
  return isRecord(order) && isJsonNumber(order.id) ? numberText(order.id) : undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !isLosslessNumber(value);
}
