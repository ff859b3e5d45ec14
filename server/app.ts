import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  LogController,
} from "fastify";
import { type ErrorCode, errorRecord, JSON_CONTENT_TYPE } from "./core/errors.ts";
import { errorResponse, type MockRequest, type MockResponse, pathOf } from "./core/exchange.ts";
import type { MockCore } from "./core/mock.ts";

export { BASE_PATH } from "./core/api.ts";

// Requests of this API carry no body and control requests small ones; a cap keeps a shared mock safe.
export const BODY_LIMIT_BYTES = 16 * 1024;
// Ids longer than this are refused by parseOrderId anyway; the router must still hand them over, not 414.
const MAX_PARAM_LENGTH = 16 * 1024;
// Node's default, set explicitly: larger request heads are refused with 431 before any routing.
export const MAX_HEADER_BYTES = 16 * 1024;

export interface MockServerOptions {
  core: MockCore;
  /** Structured request log; omitted means no logging at all (the fastest path). */
  logger?: FastifyBaseLogger;
  /** Time a client has to send a whole request (default 30 s); slower ones get 408 and are cut off. */
  requestTimeoutMs?: number;
  /** Time a client has to send the request head (default 10 s). */
  headersTimeoutMs?: number;
  /** How often Node looks for connections past those timeouts (default 1 s). */
  timeoutCheckIntervalMs?: number;
}

/**
 * The Node transport over the mock's core: Fastify reads requests (limits, timeouts, malformed HTTP,
 * graceful close) and writes what the core answers, delays and faults included. No rule lives here.
 */
export async function createServer(options: MockServerOptions): Promise<FastifyInstance> {
  const { core } = options;
  const app: FastifyInstance = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // One line per request comes from the onResponse hook below, with no headers in it.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    http: {
      headersTimeout: options.headersTimeoutMs ?? 10_000,
      maxHeaderSize: MAX_HEADER_BYTES,
      connectionsCheckingInterval: options.timeoutCheckIntervalMs ?? 1_000,
    },
    // Errors found before a request reaches the core still get a spec-shaped Error record.
    clientErrorHandler: answerClientError,
    frameworkErrors: (error, _request, reply) => {
      sendError(
        reply as unknown as FastifyReply,
        "bad_request",
        `The request could not be read: ${error.message}`,
      );
    },
    // Requests already received on a kept-alive connection during shutdown are answered, not given a 503.
    return503OnClosing: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  });

  app.removeAllContentTypeParsers();
  // Bodies are kept as bytes whatever their Content-Type: the core decides what, if anything, to read.
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));

  if (options.logger) {
    app.addHook("onResponse", async (request, reply) => {
      request.log.info(
        {
          method: request.method,
          path: pathOf(request.url),
          status: reply.statusCode,
          ms: reply.elapsedTime,
        },
        "request",
      );
    });
  }

  // Every request goes to the core, which routes; Fastify's own routing is not used.
  const handler = (
    request: { method: string; url: string; headers: unknown; body: unknown },
    reply: FastifyReply,
  ) => {
    const response = core.handle({
      method: request.method,
      url: request.url,
      headers: request.headers as MockRequest["headers"],
      ...(request.body instanceof Uint8Array ? { body: request.body } : {}),
    });
    if (response.delayMs) return sleep(response.delayMs).then(() => write(reply, response));
    return write(reply, response);
  };
  app.route({ method: app.supportedMethods, url: "*", handler });
  app.setNotFoundHandler(handler);

  app.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
    if (error.statusCode === 413) {
      // The oversized body was never read; closing the connection keeps its bytes from being parsed as a request.
      reply.header("connection", "close");
      return sendError(
        reply,
        "payload_too_large",
        `Request bodies are limited to ${BODY_LIMIT_BYTES} bytes.`,
      );
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return sendError(reply, "bad_request", "The request could not be read.");
    }
    request.log.error({ err: error }, "unexpected error");
    return sendError(reply, "internal_error", "Unexpected error.");
  });

  return app;
}

function write(reply: FastifyReply, response: MockResponse): FastifyReply {
  if (response.fault === "close") {
    reply.hijack();
    reply.raw.socket?.destroy();
    return reply;
  }
  if (response.fault === "truncate") {
    // The head promises the whole body; half of it is sent and the connection is closed.
    reply.hijack();
    const body = Buffer.from(response.body ?? "");
    const raw = reply.raw;
    raw.writeHead(response.status, { ...response.headers, "content-length": String(body.length) });
    raw.write(body.subarray(0, Math.floor(body.length / 2)), () => raw.socket?.destroy());
    return reply;
  }
  return reply.code(response.status).headers(response.headers).send(response.body);
}

/** An Error record for what Fastify refuses before the core sees the request, written like the core's. */
function sendError(reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  return write(reply, errorResponse(code, message));
}

/**
 * Requests Node's parser refuses (a head over MAX_HEADER_BYTES, a timeout, malformed HTTP) never reach
 * Fastify; the connection gets a raw Error record and is closed, as Node itself would do with a bare status.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const record =
    error.code === "HPE_HEADER_OVERFLOW"
      ? errorRecord("headers_too_large", `Request headers are limited to ${MAX_HEADER_BYTES} bytes.`)
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? errorRecord("request_timeout", "The request was not received in time.")
        : errorRecord("bad_request", "The request is not valid HTTP.");
  const body = JSON.stringify(record);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${record.status} ${STATUS_CODES[record.status]}\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
