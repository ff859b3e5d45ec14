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
  headers: Record<string, string> = {},
  status?: number,
): MockResponse {
  const record = errorRecord(code, message, status);
  return {
    status: record.status,
    headers: { ...headers, "content-type": JSON_CONTENT_TYPE },
    body: JSON.stringify(record),
  };
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
