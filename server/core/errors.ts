import type { ErrorRecord } from "../../contract/types.ts";

/** Every `code` the mock puts in an Error record, with its status or statuses; docs/mock-server.md lists them. */
export const ERROR_CODES = {
  unauthorized: 401,
  foreign_host: 403,
  foreign_origin: 403,
  order_not_found: 404,
  order_not_cancellable: 409,
  world_full: 409,
  not_found: 404,
  method_not_allowed: 405,
  bad_request: 400,
  invalid_session: 400,
  invalid_prefer: 400,
  invalid_control_request: 400,
  request_timeout: 408,
  payload_too_large: 413,
  headers_too_large: 431,
  internal_error: 500,
  store_unavailable: 503,
  simulated_failure: [500, 502, 503, 504],
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

/** The statuses a code is sent with. */
export function statusesOf(code: ErrorCode): readonly number[] {
  const statuses: number | readonly number[] = ERROR_CODES[code];
  return typeof statuses === "number" ? [statuses] : statuses;
}

export function errorRecord(code: ErrorCode, message: string, status?: number): ErrorRecord {
  return { code, message, status: status ?? (statusesOf(code)[0] as number) };
}

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";
