import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import cors from "@fastify/cors";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import { createAuthenticator } from "./auth.ts";
import { type ErrorCode, errorRecord, JSON_CONTENT_TYPE } from "./errors.ts";
import { parseOrderId } from "./order-id.ts";
import type { Store } from "./store.ts";

export const BASE_PATH = "/v1";
const LIST_PATH = `${BASE_PATH}/store/orders`;
const CANCEL_PATH = `${BASE_PATH}/store/orders/:orderId`;
const AUTH_CHALLENGE = 'Bearer realm="petstore"';
const INVALID_TOKEN_CHALLENGE = `${AUTH_CHALLENGE}, error="invalid_token"`;

// Requests of this API carry no body; a small cap keeps a shared mock safe from uploads.
export const BODY_LIMIT_BYTES = 16 * 1024;
// Ids longer than this are refused by parseOrderId anyway; the router must still hand them over, not 414.
const MAX_PARAM_LENGTH = 16 * 1024;
// Node's default, set explicitly: larger request heads are refused with 431 before any routing.
export const MAX_HEADER_BYTES = 16 * 1024;

export interface MockServerOptions {
  store: Store;
  apiKeys: readonly string[];
  /** Origins allowed to call the mock from a browser; `"*"` (the default) allows any. */
  corsOrigins?: readonly string[] | "*";
  /** Structured request log; omitted means no logging at all (the fastest path). */
  logger?: FastifyBaseLogger;
  /** Time a client has to send a whole request (default 30 s); slower ones get 408 and are cut off. */
  requestTimeoutMs?: number;
  /** Time a client has to send the request head (default 10 s). */
  headersTimeoutMs?: number;
  /** How often Node looks for connections past those timeouts (default 1 s). */
  timeoutCheckIntervalMs?: number;
}

/** The mock's HTTP layer: routing, authentication, CORS and error records around a Store. */
export async function createServer(options: MockServerOptions): Promise<FastifyInstance> {
  const { store } = options;
  const authenticate = createAuthenticator(options.apiKeys);
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
    // Errors found before a request reaches a route still get a spec-shaped Error record.
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
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, _body, done) => done(null, undefined));

  await app.register(cors, {
    origin: options.corsOrigins === undefined || options.corsOrigins === "*" ? "*" : [...options.corsOrigins],
    // Strings, not arrays: the plugin joins arrays again on every request.
    methods: "GET, HEAD, DELETE",
    allowedHeaders: "Authorization, Content-Type",
    exposedHeaders: "WWW-Authenticate, Allow",
    maxAge: 600,
    strictPreflight: false,
  });

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

  /** Authentication comes before anything else an operation does; false means the 401 is already sent. */
  const authorized = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const result = authenticate(request.headers.authorization);
    if (result.ok) return true;
    reply.header("www-authenticate", result.tokenGiven ? INVALID_TOKEN_CHALLENGE : AUTH_CHALLENGE);
    sendError(
      reply,
      "unauthorized",
      result.tokenGiven
        ? "The API key is not valid."
        : "An API key is required: send Authorization: Bearer <API_KEY>.",
    );
    return false;
  };

  app.get(LIST_PATH, (request, reply) => {
    if (!authorized(request, reply)) return reply;
    return reply.header("content-type", JSON_CONTENT_TYPE).send(store.listBody());
  });

  app.delete<{ Params: { orderId: string } }>(CANCEL_PATH, (request, reply) => {
    if (!authorized(request, reply)) return reply;
    const { orderId } = request.params;
    const id = parseOrderId(orderId);
    const outcome = id === null ? "not_found" : store.cancel(id);
    switch (outcome) {
      case "cancelled":
        return reply.code(204).send();
      case "not_cancellable":
        return sendError(
          reply,
          "order_not_cancellable",
          `Order ${id} cannot be cancelled: only pending orders can be.`,
        );
      case "not_found":
        return sendError(reply, "order_not_found", `No order with id ${truncate(orderId)}.`);
    }
  });

  const allowed: Record<string, string[]> = { [LIST_PATH]: ["GET", "HEAD"], [CANCEL_PATH]: ["DELETE"] };
  for (const [url, methods] of Object.entries(allowed)) {
    const allow = methods.join(", ");
    app.route({
      // OPTIONS stays with the CORS plugin, which answers preflights without authentication.
      method: app.supportedMethods.filter((method) => !methods.includes(method) && method !== "OPTIONS"),
      url,
      handler: (request, reply) => {
        reply.header("allow", allow);
        return sendError(
          reply,
          "method_not_allowed",
          `${request.method} is not allowed here; allowed: ${allow}.`,
        );
      },
    });
  }

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, "not_found", `No resource at ${truncate(pathOf(request.url))}.`),
  );

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

function sendError(reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  const record = errorRecord(code, message);
  return reply.code(record.status).header("content-type", JSON_CONTENT_TYPE).send(JSON.stringify(record));
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

function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
