import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { RecordedRequest, RecordedResponse } from "./report.ts";

export interface Exchange {
  request: RecordedRequest;
  /** Undefined when no response came back; then `error` says why. */
  response?: { status: number; headers: Record<string, string>; body: string };
  error?: string;
  /** True for failures to reach the target at all (refused, unknown host), as opposed to a timeout. */
  unreachable?: boolean;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const EXCERPT_CHARS = 2000;
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNRESET",
]);

export interface HttpClient {
  send(method: string, path: string, headers: Record<string, string>): Promise<Exchange>;
  /** How many requests were sent. */
  readonly count: number;
  close(): void;
}

/** A keep-alive client that sends paths byte for byte (no URL normalisation) under the base address. */
export function createHttpClient(
  baseUrl: URL,
  timeoutMs: number,
  /** Sent with every request (a mock session, for one); a request's own headers win. */
  commonHeaders: Readonly<Record<string, string>> = {},
): HttpClient {
  const secure = baseUrl.protocol === "https:";
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const request = secure ? httpsRequest : httpRequest;
  const basePath = baseUrl.pathname.replace(/\/+$/, "");
  let count = 0;
  return {
    get count() {
      return count;
    },
    close: () => agent.destroy(),
    send(method, path, ownHeaders) {
      count++;
      const headers = { ...commonHeaders, ...ownHeaders };
      const fullPath = `${basePath}${path}`;
      const recorded: RecordedRequest = { method, path: fullPath, headers: maskHeaders(headers) };
      return new Promise((resolve) => {
        const outgoing = request(
          {
            agent,
            method,
            protocol: baseUrl.protocol,
            hostname: baseUrl.hostname.replace(/^\[|\]$/g, ""),
            port: baseUrl.port,
            path: fullPath,
            headers,
            timeout: timeoutMs,
          },
          (incoming) => {
            const chunks: Buffer[] = [];
            let size = 0;
            incoming.on("data", (chunk: Buffer) => {
              size += chunk.length;
              if (size <= MAX_BODY_BYTES) chunks.push(chunk);
            });
            incoming.on("end", () =>
              resolve({
                request: recorded,
                response: {
                  status: incoming.statusCode ?? 0,
                  headers: flattenHeaders(incoming.headers),
                  body: Buffer.concat(chunks).toString("utf8"),
                },
              }),
            );
            incoming.on("error", (error) =>
              resolve({ request: recorded, error: `response broken off: ${error.message}` }),
            );
          },
        );
        outgoing.on("timeout", () => outgoing.destroy(new Error(`no response within ${timeoutMs} ms`)));
        outgoing.on("error", (error: NodeJS.ErrnoException) =>
          resolve({
            request: recorded,
            error: error.code ? `${error.code}: ${error.message}` : error.message,
            unreachable: error.code !== undefined && UNREACHABLE_CODES.has(error.code),
          }),
        );
        outgoing.end();
      });
    },
  };
}

/** A response as a report shows it: headers and the start of the body. */
export function recordResponse(response: NonNullable<Exchange["response"]>): RecordedResponse {
  const body =
    response.body.length > EXCERPT_CHARS ? `${response.body.slice(0, EXCERPT_CHARS)}…` : response.body;
  return { status: response.status, headers: response.headers, body };
}

function maskHeaders(headers: Record<string, string>): Record<string, string> {
  const masked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    masked[name] = name.toLowerCase() === "authorization" ? maskAuthorization(value) : value;
  }
  return masked;
}

/** Keeps the scheme, which a reader needs to see, and hides the credentials. */
export function maskAuthorization(value: string): string {
  const [scheme, ...rest] = value.trim().split(/\s+/);
  return rest.length === 0 || rest.join("") === "" ? value : `${scheme} ***`;
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
