import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { capConnections, defaultMaxConnections } from "../common/connection-cap.ts";
import { CONTROL_PATH } from "./core/control.ts";
import { type ErrorCode, errorRecord, JSON_CONTENT_TYPE } from "./core/errors.ts";
import { errorResponse, type MockResponse, type PiecedBody, pathOf, wholeBytes } from "./core/exchange.ts";
import { HEALTH_PATH, type MockCore } from "./core/mock.ts";
import { SESSION_HEADER } from "./core/sessions.ts";
import type { SyncOrAsync } from "./core/sync-or-async.ts";
import type { MockLog } from "./request-log.ts";

export { BASE_PATH } from "./core/api.ts";

// Requests of this API carry no body and control requests small ones; a cap keeps a shared mock safe.
export const BODY_LIMIT_BYTES = 16 * 1024;
// Node's default, set explicitly: larger request heads are refused with 431 before any routing.
export const MAX_HEADER_BYTES = 16 * 1024;
// Longer than the 60 s idle timeout of common load balancers, so they never reuse a connection just closed.
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

export interface MockServerOptions {
  core: MockCore;
  /** Request log (pretty or JSON lines); omitted means no logging at all (the fastest path). */
  log?: MockLog;
  /** Time a client has to send a whole request (default 30 s); slower ones get 408 and are cut off. */
  requestTimeoutMs?: number;
  /** Time a client has to send the request head (default 10 s). */
  headersTimeoutMs?: number;
  /** How often Node looks for connections past those timeouts (default 1 s). */
  timeoutCheckIntervalMs?: number;
  /** Connections kept open at once (default: defaultMaxConnections()). */
  maxConnections?: number;
}

export interface MockServer {
  readonly server: Server;
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Refuses new connections, answers the requests already received, then resolves. */
  close(): Promise<void>;
}

/**
 * The Node transport over the mock's core, on node:http itself: it reads requests (body limit, timeouts,
 * malformed HTTP, graceful close) and writes what the core answers, delays and faults included. No rule
 * lives here. A framework would add a second request lifecycle to every request and route nothing, since
 * the core routes (BENCHMARKS.md measures the difference).
 */
export function createServer(options: MockServerOptions): MockServer {
  const { core, log } = options;
  let closing = false;
  let requestCount = 0;
  const write = createWriter();

  const deliver = (request: IncomingMessage, response: ServerResponse, answered: MockResponse) => {
    // An answer given during shutdown closes its connection, whenever its request came: the process ends
    // once the answers owed are given, not once idle connections time out.
    if (closing) response.shouldKeepAlive = false;
    if (answered.delayMs) {
      const timer = setTimeout(() => write(request, response, answered), answered.delayMs);
      // A client that gives up during the delay gets nothing; the timer must not keep a closing server up.
      response.once("close", () => clearTimeout(timer));
      return;
    }
    write(request, response, answered);
  };
  const unexpected = (error: unknown): MockResponse => {
    log?.error(error, "unexpected error");
    return errorResponse("internal_error", "Unexpected error.");
  };

  const answer = (request: IncomingMessage, response: ServerResponse, body?: Uint8Array) => {
    let answered: SyncOrAsync<MockResponse>;
    try {
      answered = core.handle({
        method: request.method as string,
        url: request.url as string,
        headers: request.headers as Record<string, string | undefined>,
        ...(body ? { body } : {}),
      });
    } catch (error) {
      answered = unexpected(error);
    }
    if (answered instanceof Promise) {
      answered.then(
        (settled) => deliver(request, response, settled),
        (error) => deliver(request, response, unexpected(error)),
      );
    } else deliver(request, response, answered);
  };

  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    // Connections that carried a request during shutdown are closed after their answer.
    if (closing) response.shouldKeepAlive = false;
    if (log) logEachRequest(log, request, response, ++requestCount);
    const declared = request.headers["content-length"];
    if ((declared === undefined || declared === "0") && request.headers["transfer-encoding"] === undefined) {
      return answer(request, response);
    }
    if (declared !== undefined && Number(declared) > BODY_LIMIT_BYTES) {
      return refuseOversized(request, response, write);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        request.off("data", onData).off("end", onEnd);
        return refuseOversized(request, response, write);
      }
      chunks.push(chunk);
    };
    const onEnd = () => answer(request, response, size === 0 ? undefined : Buffer.concat(chunks, size));
    // A client that hangs up mid-body is owed nothing; the error only means the request ended early.
    request
      .on("data", onData)
      .on("end", onEnd)
      .on("error", () => {});
  };

  const server = createHttpServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      headersTimeout: options.headersTimeoutMs ?? 10_000,
      connectionsCheckingInterval: options.timeoutCheckIntervalMs ?? 1_000,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    },
    onRequest,
  );
  server.on("clientError", answerClientError);
  capConnections(server, options.maxConnections ?? defaultMaxConnections());

  return {
    server,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    close() {
      closing = true;
      return new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      });
    },
  };
}

type Write = (request: IncomingMessage, response: ServerResponse, answer: MockResponse) => void;
type Head = Array<string | number>;

/**
 * Writes the core's answers. Building the head Node is given was the largest cost left over bare
 * node:http, so it is built once where the core's answers repeat: the list answer's headers and bytes
 * are the same objects request after request (its whole head and body are kept), and Error records
 * share frozen headers (their names and values are kept; only the length is added per answer).
 */
function createWriter(): Write {
  let cachedStatus = 0;
  let cachedHeaders: Readonly<Record<string, string>> | undefined;
  let cachedBody: Uint8Array | undefined;
  let cachedHead: Head = [];
  let cachedBytes: Buffer | undefined;
  const templates = new WeakMap<object, Head>();

  const headOf = (headers: Readonly<Record<string, string>>, length: number | undefined): Head => {
    let template = templates.get(headers);
    if (template === undefined) {
      template = [];
      for (const name in headers) template.push(name, headers[name] as string);
      if (Object.isFrozen(headers)) templates.set(headers, template);
    }
    return length === undefined ? template : [...template, "content-length", length];
  };

  return (request, response, answer) => {
    if (answer.fault === "close") {
      request.socket.destroy();
      return;
    }
    const { status, headers, body } = answer;
    if (body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array)) {
      writePieces(request, response, status, headOf(headers, body.byteLength), body, answer.fault);
      return;
    }
    let head: Head;
    let bytes: Buffer | string | undefined;
    if (typeof body === "string") {
      bytes = body;
      head = headOf(headers, withoutBody(status) ? undefined : Buffer.byteLength(body));
    } else {
      if (headers !== cachedHeaders || body !== cachedBody || status !== cachedStatus) {
        cachedStatus = status;
        cachedHeaders = headers;
        cachedBody = body;
        cachedBytes = body && Buffer.from(body.buffer, body.byteOffset, body.byteLength);
        cachedHead = headOf(headers, withoutBody(status) ? undefined : (cachedBytes?.length ?? 0));
      }
      head = cachedHead;
      bytes = cachedBytes;
    }
    response.writeHead(status, head);
    if (answer.fault === "truncate") {
      // The head promises the whole body; half of it is sent and the connection is closed.
      const whole = typeof bytes === "string" ? Buffer.from(bytes) : (bytes ?? Buffer.alloc(0));
      response.write(whole.subarray(0, Math.floor(whole.length / 2)), () => request.socket.destroy());
      return;
    }
    if (bytes === undefined || request.method === "HEAD") response.end();
    else response.end(bytes);
  };
}

/**
 * A body in pieces (a session's list), about a mebibyte of them per turn of the event loop (written as one
 * batch, corked): a piece is a view of the seed's bytes or the session's own, so writing one costs no copy,
 * and other requests are answered between the turns.
 */
function writePieces(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  head: Head,
  body: PiecedBody,
  fault: MockResponse["fault"],
): void {
  response.writeHead(status, head);
  if (request.method === "HEAD") {
    response.end();
    return;
  }
  if (fault === "truncate") {
    const whole = wholeBytes(body);
    response.write(whole.subarray(0, Math.floor(whole.length / 2)), () => request.socket.destroy());
    return;
  }
  const { pieces } = body;
  let next = 0;
  const writeSlice = () => {
    if (response.destroyed) return;
    response.cork();
    let written = 0;
    while (next < pieces.length && written < PIECES_SLICE_BYTES) {
      const piece = pieces[next++] as Uint8Array;
      response.write(piece);
      written += piece.length;
    }
    response.uncork();
    if (next < pieces.length) setImmediate(writeSlice);
    else response.end();
  };
  writeSlice();
}

const PIECES_SLICE_BYTES = 1024 * 1024;

const withoutBody = (status: number) => status === 204 || status === 304 || status < 200;

/**
 * The oversized body is not read as a request: the connection is closed after the 413. Closing a socket
 * with unread bytes makes the kernel send a reset, which can reach the client before the 413 does, so the
 * close lingers: Node sends its FIN after the answer, and what the client is still sending is read and
 * dropped for a bounded time and size before the socket is destroyed.
 */
function refuseOversized(request: IncomingMessage, response: ServerResponse, write: Write): void {
  const refusal = errorResponse(
    "payload_too_large",
    `Request bodies are limited to ${BODY_LIMIT_BYTES} bytes.`,
    CLOSE_CONNECTION,
  );
  const socket = request.socket;
  socket.destroySoon = () => {
    socket.end();
    let dropped = 0;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    const stop = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    request.on("data", (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER_BYTES) stop();
    });
    request.once("end", stop).once("error", stop);
    request.resume();
  };
  write(request, response, refusal);
}

const CLOSE_CONNECTION = Object.freeze({ connection: "close" });
const LINGER_MS = 2_000;
const LINGER_BYTES = 1024 * 1024;

/** One line per request once it is answered (or cut off), with no header in it: keys never reach the log. */
function logEachRequest(log: MockLog, request: IncomingMessage, response: ServerResponse, id: number): void {
  const started = performance.now();
  response.once("close", () => {
    const session = request.headers[SESSION_HEADER];
    const path = pathOf(request.url as string);
    const read = request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS";
    log.request({
      reqId: `req-${id.toString(36)}`,
      method: request.method as string,
      path,
      status: response.headersSent ? response.statusCode : null,
      ms: Math.round((performance.now() - started) * 1000) / 1000,
      ...(typeof session === "string" ? { session } : {}),
      ...(response.writableFinished ? {} : { completed: false }),
      ...(read && (path === HEALTH_PATH || path === CONTROL_PATH || path.startsWith(`${CONTROL_PATH}/`))
        ? { controlRead: true }
        : {}),
    });
  });
}

/**
 * Requests Node's parser refuses (a head over MAX_HEADER_BYTES, a timeout, malformed HTTP) never reach
 * the core; the connection gets a raw Error record and is closed, as Node itself would do with a bare status.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const code: ErrorCode =
    error.code === "HPE_HEADER_OVERFLOW"
      ? "headers_too_large"
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "request_timeout"
        : "bad_request";
  const record = errorRecord(code, CLIENT_ERROR_MESSAGES[code] ?? "The request is not valid HTTP.");
  const body = JSON.stringify(record);
  // An answer already started on this connection cannot be followed by another head.
  const started = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage?.headersSent;
  if (socket.writable && !started) {
    socket.write(
      `HTTP/1.1 ${record.status} ${STATUS_CODES[record.status]}\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

const CLIENT_ERROR_MESSAGES: Partial<Record<ErrorCode, string>> = {
  headers_too_large: `Request headers are limited to ${MAX_HEADER_BYTES} bytes.`,
  request_timeout: "The request was not received in time.",
};
