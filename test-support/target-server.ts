import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";

/**
 * A small, independent implementation of the API for testing the suite: correct by default, with switches
 * for the valid choices the spec leaves open and for single defects. It shares no code with the mock.
 */
export interface TargetBehaviour {
  // Valid choices.
  removeCancelled?: boolean;
  conflictWithoutBody?: boolean;
  extraFields?: boolean;
  sparseOrders?: boolean;
  emptyStore?: boolean;
  // Defects, one at a time.
  listNotArray?: boolean;
  quantityAsString?: boolean;
  statusExposed?: boolean;
  errorWithoutMessage?: boolean;
  errorStatusMismatch?: boolean;
  lookupBeforeAuth?: boolean;
  cancelWithoutTransition?: boolean;
  shippedCancellable?: boolean;
  serverErrorOnMalformedId?: boolean;
  badRequestOnMalformedId?: boolean;
  textContentType?: boolean;
  acceptsBasic?: boolean;
  acceptsAnyBearer?: boolean;
  cancelsWhenRefused?: boolean;
  paginates?: boolean;
  idsThroughDoubles?: boolean;
  idBeyondInt64?: boolean;
  duplicateIds?: boolean;
  conflictNonErrorBody?: boolean;
  uriTooLongOnLongId?: boolean;
  unauthorizedAs403?: boolean;
  // Valid choices for input the spec has no case for, which only --strict refuses.
  unprocessableOnMalformedId?: boolean;
  badRequestOnUnknownQuery?: boolean;
  // What stands in front of real deployments.
  /** A gateway that refuses (403) requests without this header and value. */
  requireHeader?: { name: string; value: string };
  /** Answers the first N requests of each path and method with 429 and this Retry-After. */
  rateLimited?: { times: number; retryAfter: string };
  /**
   * Every answer an HTML error page: 503 as a gateway gives when the service behind it is down, or the
   * status given (a 500 from a backend that fails every request).
   */
  down?: true | number;
  /** Serve HTTPS with this key and certificate; `ca` set means a client certificate signed by it is required. */
  tls?: { key: string; cert: string; ca?: string };
  /** Counts the requests that reached the target. */
  seen?: { count: number };
  /** Lists ids as JSON strings ("id":"2"). */
  stringIds?: boolean;
  /** Reads an id leniently, as parseInt does ("1.5" is 1, "12abc" is 12). */
  lenientIds?: boolean;
  /** Records the path segment of every DELETE that reached the order lookup, and the orders it changed. */
  deletes?: { segments: string[]; cancelled: string[] };
  /** Tracks requests in flight; each is held 5 ms so that concurrent ones overlap. */
  inFlight?: { now: number; most: number };
  // Defects that only concurrency shows.
  /** A cancel that reads the status, waits, then writes it: cancels arriving together all see it pending. */
  racyCancel?: boolean;
  /** Takes 5 ms a request and answers 503 while another is in flight, as an overloaded backend does. */
  failsUnderConcurrency?: boolean;
  // Size, and bodies that do not arrive whole.
  /** This many more orders after the seeded ones (ids from 1000, one in three shipped). */
  bulkOrders?: number;
  /** The bulk order at this index of the list has a quantity written as a string. */
  badOrderAt?: number;
  /** Every bulk order has a quantity written as a string. */
  everyBulkOrderBad?: boolean;
  /** Lists are cut: fewer bytes than Content-Length, then the connection closes. */
  listCut?: "short-content-length" | "unended-chunked";
  /** Lists never end: orders are written for as long as the client reads. */
  endlessList?: boolean;
  /** A request that arrives on a kept-alive connection is dropped unanswered, once, as when the server closed it. */
  dropsReusedConnection?: { dropped: number };
}

export const TARGET_KEY = "target-key-42";
export const PENDING_ID = "9007199254740993";
export const SHIPPED_ID = "2";
/** The other pending order, for the race scenario. */
export const RACE_ID = "1";

interface TargetOrder {
  id: string;
  status: "pending" | "shipped" | "cancelled";
  fields: string;
}

export interface RunningTarget {
  url: string;
  close(): Promise<void>;
}

export async function startTarget(behaviour: TargetBehaviour = {}): Promise<RunningTarget> {
  const orders = seedOrders(behaviour);
  const limited = new Map<string, number>();
  let busy = 0;
  const served = new WeakSet<object>();
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    if (behaviour.seen) behaviour.seen.count++;
    const drops = behaviour.dropsReusedConnection;
    if (drops && served.has(request.socket) && drops.dropped === 0) {
      drops.dropped++;
      request.socket.destroy();
      return;
    }
    served.add(request.socket);
    if (behaviour.failsUnderConcurrency) {
      busy++;
      response.on("close", () => {
        busy--;
      });
      if (busy > 1) {
        response
          .writeHead(503, { "content-type": "application/json" })
          .end('{"code":"overloaded","message":"try again later","status":503}');
        return;
      }
      // Each request takes a while, so that requests sent together meet.
      setTimeout(() => serve(request, response), 5);
      return;
    }
    const { inFlight } = behaviour;
    if (inFlight) {
      inFlight.now++;
      inFlight.most = Math.max(inFlight.most, inFlight.now);
      response.on("close", () => {
        inFlight.now--;
      });
      setTimeout(() => serve(request, response), 5);
      return;
    }
    serve(request, response);
  };
  const serve = (request: IncomingMessage, response: ServerResponse) => {
    if (behaviour.down) {
      response
        .writeHead(behaviour.down === true ? 503 : behaviour.down, { "content-type": "text/html" })
        .end("<html><body>Service Unavailable</body></html>");
      return;
    }
    const gate = behaviour.requireHeader;
    if (gate && request.headers[gate.name.toLowerCase()] !== gate.value) {
      response.writeHead(403, { "content-type": "text/plain" }).end("missing gateway header");
      return;
    }
    if (behaviour.rateLimited) {
      const key = `${request.method} ${request.url}`;
      const count = (limited.get(key) ?? 0) + 1;
      limited.set(key, count);
      if (count <= behaviour.rateLimited.times) {
        response.writeHead(429, { "retry-after": behaviour.rateLimited.retryAfter }).end();
        return;
      }
    }
    handle(request, response, orders, behaviour);
  };
  const { tls } = behaviour;
  const server: Server = tls
    ? (createHttpsServer(
        {
          key: tls.key,
          cert: tls.cert,
          ...(tls.ca ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}),
        },
        listener,
      ) as unknown as Server)
    : createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs `use` against a fresh target with this behaviour, closed afterwards whatever happens. */
export async function withTarget<T>(
  behaviour: TargetBehaviour,
  use: (url: string) => Promise<T>,
): Promise<T> {
  const target = await startTarget(behaviour);
  try {
    return await use(target.url);
  } finally {
    await target.close();
  }
}

function seedOrders(behaviour: TargetBehaviour): TargetOrder[] {
  if (behaviour.emptyStore) return [];
  const extra = behaviour.extraFields ? ',"note":"gift wrap","tags":["a"]' : "";
  const full = (petId: string, complete: boolean) =>
    behaviour.sparseOrders
      ? ""
      : `,"petId":${petId},"quantity":${behaviour.quantityAsString ? '"2"' : "2"},"shipDate":"2026-11-02T10:00:00Z","complete":${complete}${extra}`;
  const orders: TargetOrder[] = [
    { id: "1", status: "pending", fields: full("10", false) },
    { id: SHIPPED_ID, status: "shipped", fields: full("11", true) },
    { id: PENDING_ID, status: "pending", fields: full("9223372036854775807", false) },
  ];
  if (behaviour.idBeyondInt64) orders.push({ id: "9223372036854775808", status: "shipped", fields: "" });
  if (behaviour.duplicateIds) orders.push({ id: "1", status: "shipped", fields: "" });
  return orders;
}

/**
 * The seeded orders, then the bulk ones, written in chunks as a large store's list goes out; the bulk part
 * is made once, since it never changes.
 */
const bulkBodies = new Map<string, Buffer[]>();

function sendBulk(response: ServerResponse, seeded: string[], behaviour: TargetBehaviour) {
  const count = behaviour.bulkOrders ?? 0;
  const key = `${count}/${behaviour.badOrderAt}/${behaviour.everyBulkOrderBad}`;
  let chunks = bulkBodies.get(key);
  if (!chunks) {
    chunks = [];
    let text = "";
    for (let index = 0; index < count; index++) {
      const bad = behaviour.everyBulkOrderBad || index + seeded.length === behaviour.badOrderAt;
      const shipped = index % 3 === 0;
      text += `,{"id":${1000 + index},"petId":${index % 5000},"quantity":${bad ? '"2"' : 1 + (index % 4)},"shipDate":"2026-0${1 + (index % 9)}-1${index % 10}T08:30:00Z","complete":${shipped}}`;
      if (text.length > 1 << 20) {
        chunks.push(Buffer.from(text));
        text = "";
      }
    }
    chunks.push(Buffer.from(`${text}]`));
    bulkBodies.set(key, chunks);
  }
  response.writeHead(200, { "content-type": "application/json" });
  response.write(`[${seeded.join(",")}`);
  let next = 0;
  const pump = () => {
    while (next < (chunks as Buffer[]).length) {
      if (!response.write((chunks as Buffer[])[next++])) {
        response.once("drain", pump);
        return;
      }
    }
    response.end();
  };
  pump();
}

function sendEndless(response: ServerResponse) {
  response.writeHead(200, { "content-type": "application/json" });
  const piece = Buffer.from(`${'{"id":1,"quantity":1},'.repeat(2000)}`);
  response.write("[");
  const pump = () => {
    while (!response.destroyed && response.write(piece));
    if (!response.destroyed) response.once("drain", pump);
  };
  pump();
}

function sendCut(response: ServerResponse, body: string, how: "short-content-length" | "unended-chunked") {
  const half = body.slice(0, Math.floor(body.length / 2));
  if (how === "short-content-length")
    response.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) });
  else response.writeHead(200, { "content-type": "application/json" });
  response.write(half, () => setTimeout(() => response.socket?.destroy(), 20));
}

function handle(
  request: IncomingMessage,
  response: ServerResponse,
  orders: TargetOrder[],
  behaviour: TargetBehaviour,
) {
  const url = new URL(request.url ?? "/", "http://target");
  const send = (status: number, body?: string) => {
    if (body === undefined) {
      response.writeHead(status).end();
      return;
    }
    response
      .writeHead(status, { "content-type": behaviour.textContentType ? "text/plain" : "application/json" })
      .end(body);
  };
  const sendError = (status: number, code: string) => {
    const record: Record<string, unknown> = {
      code,
      message: `${code} happened`,
      status: behaviour.errorStatusMismatch ? 400 : status,
    };
    if (behaviour.errorWithoutMessage) delete record.message;
    send(status, JSON.stringify(record));
  };
  const authorized = () => {
    const header = request.headers.authorization ?? "";
    if (behaviour.acceptsBasic && header.startsWith("Basic ")) return true;
    const match = /^Bearer (\S+)$/i.exec(header);
    return match !== null && (behaviour.acceptsAnyBearer || match[1] === TARGET_KEY);
  };
  const refuse = () => sendError(behaviour.unauthorizedAs403 ? 403 : 401, "unauthorized");

  if (url.pathname === "/v1/store/orders" && request.method === "GET") {
    if (!authorized()) return refuse();
    let listed = orders.filter((order) => !(behaviour.removeCancelled && order.status === "cancelled"));
    if (behaviour.badRequestOnUnknownQuery && url.search !== "") return sendError(400, "unknown_parameter");
    if (behaviour.paginates && url.searchParams.has("limit"))
      listed = listed.slice(0, Number(url.searchParams.get("limit")));
    const body = listed.map((order) => {
      const exact = behaviour.idsThroughDoubles ? String(Number(order.id)) : order.id;
      const id = behaviour.stringIds ? `"${exact}"` : exact;
      const status = behaviour.statusExposed ? `,"status":"${order.status}"` : "";
      return `{"id":${id}${order.fields}${status}}`;
    });
    if (behaviour.bulkOrders) return sendBulk(response, body, behaviour);
    if (behaviour.endlessList) return sendEndless(response);
    const array = `[${body.join(",")}]`;
    if (behaviour.listCut) return sendCut(response, array, behaviour.listCut);
    return send(200, behaviour.listNotArray ? `{"orders":${array}}` : array);
  }

  const match = /^\/v1\/store\/orders\/([^/]+)$/.exec(url.pathname);
  if (match?.[1] !== undefined && request.method === "DELETE") {
    const raw = behaviour.lenientIds ? String(Number.parseInt(match[1], 10)) : match[1];
    behaviour.deletes?.segments.push(match[1]);
    if (behaviour.uriTooLongOnLongId && raw.length > 100) return send(414);
    const known = /^\d+$/.test(raw);
    if (!known && behaviour.serverErrorOnMalformedId) return send(500, '{"oops":true}');
    if (!known && behaviour.badRequestOnMalformedId) return sendError(400, "bad_request");
    if (!known && behaviour.unprocessableOnMalformedId) return sendError(422, "unprocessable");
    const lookupId = behaviour.idsThroughDoubles && known ? String(Number(raw)) : raw;
    const order = orders.find(
      (candidate) => (behaviour.idsThroughDoubles ? String(Number(candidate.id)) : candidate.id) === lookupId,
    );
    if (behaviour.lookupBeforeAuth && !order) return sendError(404, "order_not_found");
    if (!authorized()) {
      if (behaviour.cancelsWhenRefused && order?.status === "pending") order.status = "cancelled";
      return refuse();
    }
    if (!order || (behaviour.removeCancelled && order.status === "cancelled"))
      return sendError(404, "order_not_found");
    if (order.status === "pending" || (behaviour.shippedCancellable && order.status === "shipped")) {
      if (behaviour.racyCancel) {
        // Long enough that every cancel of a burst arrives before the first one writes, on a loaded machine too.
        setTimeout(() => {
          order.status = "cancelled";
          send(204);
        }, 50);
        return;
      }
      if (!behaviour.cancelWithoutTransition) order.status = "cancelled";
      behaviour.deletes?.cancelled.push(order.id);
      return send(204);
    }
    if (behaviour.conflictWithoutBody) return send(409);
    if (behaviour.conflictNonErrorBody) return send(409, '{"error":"already shipped"}');
    return sendError(409, "order_not_cancellable");
  }
  return sendError(404, "not_found");
}
