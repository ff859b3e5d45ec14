import { readdirSync, readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * Connections a server keeps open at most by default: four fifths of the file descriptors the process has
 * left (its limit, less those open now: the rest for files, Redis and the like), each connection taking
 * `descriptorsEach` (a proxy's client may hold a connection to its upstream too), one at least; 1,000
 * descriptors' worth where the limit cannot be read. Never more than the limit allows, however low it is.
 */
export function defaultMaxConnections(descriptorsEach = 1): number {
  let left = 1_000 / 0.8;
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((text) => text.startsWith("Max open files"));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    if (Number.isSafeInteger(soft) && soft > 0) left = soft - readdirSync("/proc/self/fd").length;
  } catch {
    // Not Linux: fall through to a figure under the common default limit of 1,024.
  }
  return Math.max(1, Math.floor((left * 0.8) / descriptorsEach));
}

/**
 * Keeps at most `max` connections open: past it, each new connection closes the oldest idle one (kept
 * alive between requests, or still sending a request head). Without it, a thousand idle connections use up
 * the file descriptors and every new client waits until keep-alive times them out. A busy connection is
 * never closed for another; when every one is busy, the new one is closed at once, unread, so that clients
 * that never finish cannot use up the file descriptors either: the request-read timeout frees their places.
 * The work is done only when a connection opens past the cap, never per request.
 */
export function capConnections(server: Server, max: number): void {
  // In the order they opened: the oldest first.
  const open = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    if (open.size <= max) return;
    for (const candidate of open) {
      if (candidate === socket) break;
      // Already ended by the server (a 408 sent, an answer whose connection closes): closing, it holds no
      // place, though its own close may come after the next connection opens.
      if (candidate.writableEnded || candidate.destroyed) {
        open.delete(candidate);
        if (open.size <= max) return;
        continue;
      }
      if (busy(candidate)) continue;
      open.delete(candidate);
      candidate.destroy();
      return;
    }
    open.delete(socket);
    socket.destroy();
  });
}

/** What Node's server keeps on a connection's socket of the exchange it is in. */
interface ServerSocket extends Socket {
  /** The response being answered, cleared once it is sent. */
  _httpMessage?: unknown;
  /** The request being read, cleared once its body has ended; no parser once the socket is freed. */
  parser?: { incoming?: { complete: boolean } | null } | null;
}

/**
 * Whether a connection is in an exchange: being answered, or sending a request body, answered or not (an
 * upstream may answer before it has read the body, as Node's own server does). Taking such a connection
 * for idle would let dripping bodies gather past the cap, each holding what its request started.
 */
function busy(socket: ServerSocket): boolean {
  if (socket._httpMessage) return true;
  const incoming = socket.parser?.incoming;
  return incoming !== undefined && incoming !== null && !incoming.complete;
}
