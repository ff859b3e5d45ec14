import type { ErrorRecord } from "../contract/types.ts";

/** Every `code` the mock puts in an Error record; the README lists them. */
export const ERROR_CODES = {
  unauthorized: 401,
  order_not_found: 404,
  order_not_cancellable: 409,
  not_found: 404,
  method_not_allowed: 405,
  bad_request: 400,
  request_timeout: 408,
  payload_too_large: 413,
  headers_too_large: 431,
  internal_error: 500,
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

export function errorRecord(code: ErrorCode, message: string): ErrorRecord {
  return { code, message, status: ERROR_CODES[code] };
}

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";
