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

/**
 * A body in pieces, written one after another: a session's list is mostly views of the seed's list body
 * with its own orders between them, so it is never copied or built whole.
 */
export interface PiecedBody {
  readonly pieces: readonly Uint8Array[];
  readonly byteLength: number;
}

/** The whole body in one array, for a transport that needs it so (a Web Response, a truncated answer). */
export function wholeBytes(body: Uint8Array | PiecedBody): Uint8Array {
  if (body instanceof Uint8Array) return body;
  if (body.pieces.length === 1) return body.pieces[0] as Uint8Array;
  const whole = new Uint8Array(body.byteLength);
  let at = 0;
  for (const piece of body.pieces) {
    whole.set(piece, at);
    at += piece.length;
  }
  return whole;
}

/** The core's answer; the transport writes it, waiting `delayMs` first. */
export interface MockResponse {
  status: number;
  /** Never changed once made: answers share header sets (see withHeader). */
  headers: Readonly<Record<string, string>>;
  body?: Uint8Array | string | PiecedBody;
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
  return {
    status: record.status,
    headers: withHeader(headers, "content-type", JSON_CONTENT_TYPE),
    body: JSON.stringify(record),
  };
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const extended = new WeakMap<object, Map<string, Map<string, Readonly<Record<string, string>>>>>();

/**
 * The headers plus one more, frozen. Most answers are built on the same few frozen header sets (the
 * constant CORS headers, the 401 challenges), so each such set and addition gets one result, shared by
 * every answer that uses it: no copy per request, and a transport may keep what it derives from it.
 * Headers that are not frozen (per-origin CORS) are copied each time, since they may be another request's.
 */
export function withHeader(
  headers: Readonly<Record<string, string>>,
  name: string,
  value: string,
): Readonly<Record<string, string>> {
  if (!Object.isFrozen(headers)) return Object.freeze({ ...headers, [name]: value });
  let byName = extended.get(headers);
  if (byName === undefined) {
    byName = new Map();
    extended.set(headers, byName);
  }
  let byValue = byName.get(name);
  if (byValue === undefined) {
    byValue = new Map();
    byName.set(name, byValue);
  }
  let shared = byValue.get(value);
  if (shared === undefined) {
    shared = Object.freeze({ ...headers, [name]: value });
    byValue.set(value, shared);
  }
  return shared;
}

export function jsonResponse(
  status: number,
  json: string,
  headers: Readonly<Record<string, string>> = NO_HEADERS,
): MockResponse {
  return { status, headers: withHeader(headers, "content-type", JSON_CONTENT_TYPE), body: json };
}

export function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

export function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
