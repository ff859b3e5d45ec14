import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The proxy's own answer, an Error record. It grants a browser on another origin no more than the upstream
 * did: the upstream's own CORS headers when there was an answer to replace, none when there was not, and
 * never an Origin echoed for its own sake.
 */
export function sendError(
  response: ServerResponse,
  status: number,
  record: { code: string; message: string },
  cors: Readonly<Record<string, string>> = {},
): void {
  response
    .writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...cors })
    .end(JSON.stringify({ ...record, status }));
}

/** The CORS headers of the upstream's answer, which a replacement of it carries on. */
export function upstreamCors(incoming: IncomingMessage): Record<string, string> {
  const cors: Record<string, string> = {};
  for (const name of [
    "access-control-allow-origin",
    "access-control-allow-credentials",
    "access-control-expose-headers",
    "vary",
  ]) {
    const value = incoming.headers[name];
    if (typeof value === "string") cors[name] = value;
  }
  return cors;
}
