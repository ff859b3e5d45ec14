import { wholeBytes } from "../core/exchange.ts";
import type { MockCore } from "../core/mock.ts";

export interface Exchange {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** How long the answer was held back: the core's word in-process, the time measured over HTTP. */
  delayedMs: number;
  fault?: "close" | "truncate";
}

/** One way of reaching the mock; the same table of cases runs over each. */
export type Transport = (exchange: Exchange) => Promise<Answer>;

const decoder = new TextDecoder();

/** The core itself, in-process: what every transport hands requests to. */
export function coreTransport(core: MockCore): Transport {
  return async ({ method, path, headers = {}, body }) => {
    const response = await core.handle({
      method,
      url: path,
      headers: Object.fromEntries(
        Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
      ),
      ...(body !== undefined ? { body: new TextEncoder().encode(body) } : {}),
    });
    const text =
      response.body === undefined
        ? ""
        : typeof response.body === "string"
          ? response.body
          : decoder.decode(wholeBytes(response.body));
    return {
      status: response.status,
      headers: response.headers,
      text: method === "HEAD" ? "" : text,
      delayedMs: response.delayMs ?? 0,
      ...(response.fault ? { fault: response.fault } : {}),
    };
  };
}

/**
 * Requests through a fetch function: the real process over HTTP (`origin` is http://host:port), MSW's
 * interception of the global fetch, or a Web-standard handler given as `send`.
 */
export function httpTransport(
  origin: string,
  // Looked up per request: MSW replaces the global fetch only once its server listens.
  send: typeof fetch = (input, init) => fetch(input, init),
): Transport {
  return async ({ method, path, headers = {}, body }) => {
    const started = performance.now();
    const response = await send(`${origin}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      text,
      delayedMs: performance.now() - started,
    };
  };
}

/** One request to a mock process over HTTP; a body is sent as JSON. */
export function sendToProcess(
  mock: { url: string },
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return httpTransport(new URL(mock.url).origin)({
    method,
    path,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body }),
  });
}
