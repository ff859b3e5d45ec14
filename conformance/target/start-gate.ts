import type { Socket } from "node:net";
import { TLSSocket } from "node:tls";

/**
 * How long a burst waits for its connections: past it, those still opening go as they open. In-process
 * interceptors hand out sockets that open only once the request is written; they pay this once per burst.
 */
export const START_GATE_MS = 1_000;

/**
 * A burst of requests sent together: each opens its own connection first, and none writes a byte before
 * every one is open (or failed, or the wait is over). Opening a connection is what spreads a burst the most
 * on a loaded machine; with the connections open, the requests leave within one turn of the event loop.
 */
export class StartGate {
  /** Settles when every party has arrived, or the wait is over. */
  readonly opened: Promise<void>;
  #open: () => void = () => {};
  #waiting: number;
  readonly #timer: NodeJS.Timeout;

  constructor(parties: number, maxWaitMs = START_GATE_MS) {
    this.#waiting = parties;
    this.opened = new Promise((resolve) => {
      this.#open = resolve;
    });
    this.#timer = setTimeout(() => this.#openNow(), maxWaitMs);
    if (parties <= 0) this.#openNow();
  }

  /** One party is ready, or out of the burst. Once per party. */
  arrive(): void {
    this.#waiting--;
    if (this.#waiting <= 0) this.#openNow();
  }

  #openNow(): void {
    clearTimeout(this.#timer);
    this.#open();
  }
}

/**
 * Calls `then` once the socket's connection is open: TCP connected, and for TLS the handshake done. A socket
 * already connected (a tunnel through a proxy) goes at once, its handshake travelling with the request.
 */
export function whenConnected(socket: Socket, then: () => void): void {
  if (!socket.connecting) {
    then();
    return;
  }
  socket.once(socket instanceof TLSSocket ? "secureConnect" : "connect", then);
}
