import type { ClientRequest, IncomingMessage } from "node:http";

/**
 * The deadlines of the forwarder's exchanges, checked by one sweep for all of them instead of a timer per
 * request: per-request socket timers keep every exchange alive for the garbage collector long after it
 * ended, which under load cost more than the judging. Requests wait for the upstream's answer (its first
 * byte) until `timeoutMs` after they began; answers must end by the whole exchange's deadline, and so must
 * every exchange, whatever it waits for.
 */
export class DeadlineSweep {
  // Oldest first, as they began, so that a sweep stops at the first one still in time.
  readonly #waiting = new Map<ClientRequest, number>();
  readonly #answering = new Map<IncomingMessage, number>();
  readonly #exchanges = new Map<object, { deadline: number; expire: () => void }>();
  readonly #sweep: NodeJS.Timeout;

  constructor(
    readonly timeoutMs: number,
    /** The `Error` an answer past its deadline is destroyed with. */
    readonly answerTooSlow: () => Error,
  ) {
    this.#sweep = setInterval(() => this.#check(), Math.max(Math.min(timeoutMs / 4, 250), 10)).unref();
  }

  /** A request sent at `begun`: destroyed unless its answer starts within the timeout. */
  waitFor(outgoing: ClientRequest, begun: number): void {
    this.#waiting.set(outgoing, begun + this.timeoutMs);
  }

  /** The answer started, or the request failed: it waits no more. */
  answered(outgoing: ClientRequest): void {
    this.#waiting.delete(outgoing);
  }

  /** An answer coming: destroyed unless it ends by `deadline`. */
  answering(incoming: IncomingMessage, deadline: number): void {
    this.#answering.set(incoming, deadline);
    incoming.once("close", () => this.#answering.delete(incoming));
  }

  /**
   * A whole exchange, keyed by `key`: ended by `expire` unless `ended` comes by `deadline`, whatever state
   * it is in, so that none can outlive the deadline by a path the other two do not watch.
   */
  exchange(key: object, deadline: number, expire: () => void): void {
    this.#exchanges.set(key, { deadline, expire });
  }

  ended(key: object): void {
    this.#exchanges.delete(key);
  }

  stop(): void {
    clearInterval(this.#sweep);
  }

  #check(): void {
    const now = performance.now();
    for (const [outgoing, deadline] of this.#waiting) {
      if (deadline > now) break;
      this.#waiting.delete(outgoing);
      outgoing.destroy(new Error(`no answer within ${this.timeoutMs} ms`));
    }
    for (const [incoming, deadline] of this.#answering) {
      if (deadline > now) break;
      this.#answering.delete(incoming);
      incoming.destroy(this.answerTooSlow());
    }
    for (const [key, { deadline, expire }] of this.#exchanges) {
      if (deadline > now) break;
      this.#exchanges.delete(key);
      expire();
    }
  }
}
