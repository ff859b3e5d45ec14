import { type ErrorCode, errorRecord, JSON_CONTENT_TYPE } from "./errors.ts";

/** A request as every transport hands it to the core: header names in lower case. */
export interface MockRequest {
  method: string;
  /** The request target as sent: path and query string, not decoded. */
  url: string;
  headers: Readonly<Record<string, string | undefined>>;
  body?: Uint8Array;
}

/** Faults a transport carries out instead of (or in the middle of) an answer. */
export type Fault = "close" | "truncate";

/** The core's answer; the transport writes it, waiting `delayMs` first. */
export interface MockResponse {
  status: number;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  delayMs?: number;
  /** `close`: the connection is closed with no answer; `truncate`: half the body, then closed. */
  fault?: Fault;
}

export function errorResponse(
  code: ErrorCode,
  message: string,
  headers: Readonly<Record<string, string>> = NO_HEADERS,
  status?: number,
): MockResponse {
  const record = errorRecord(code, message, status);
  return { status: record.status, headers: jsonHeaders(headers), body: JSON.stringify(record) };
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const withJsonType = new WeakMap<object, Record<string, string>>();

/**
 * The given headers plus the JSON content type. Headers passed in are mostly the same few objects (the
 * constant CORS headers, the 401 challenges), so each gets one frozen result, shared by every answer
 * that uses it; answers' headers are never changed after they are made.
 */
function jsonHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  let shared = withJsonType.get(headers);
  if (shared === undefined) {
    shared = Object.freeze({ ...headers, "content-type": JSON_CONTENT_TYPE });
    if (Object.isFrozen(headers)) withJsonType.set(headers, shared);
  }
  return shared;
}

export function jsonResponse(
  status: number,
  json: string,
  headers: Record<string, string> = {},
): MockResponse {
  return { status, headers: { ...headers, "content-type": JSON_CONTENT_TYPE }, body: json };
}

export function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

export function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
