import { setTimeout as sleep } from "node:timers/promises";
import type { Exchange } from "../judging/exchange.ts";

/** How 429 answers are waited out: at most `max` retries, each wait capped at `maxWaitMs`. */
export interface TooManyRequestsLimits {
  max: number;
  maxWaitMs: number;
}

// Without Retry-After, a 429 is retried after 1 s, then 2 s, 4 s…, within the cap.
const FIRST_BACKOFF_MS = 1000;

/** Which failures and answers a client sends again, on which connection and after how long. */
export class RetryPolicy {
  constructor(private readonly tooManyRequests: TooManyRequestsLimits | undefined) {}

  /**
   * A request sent by `attempt`, then sent again for as long as this policy says; `onRetry` counts each
   * time it is sent again.
   */
  async sendRetrying(attempt: () => Promise<Exchange>, onRetry: () => void): Promise<Exchange> {
    let exchange = await attempt();
    for (let retried = 0; ; retried++) {
      const wait = this.waitBeforeRetry(exchange, retried);
      if (wait === undefined) return exchange;
      await sleep(wait);
      onRetry();
      // Each attempt's exchange is its own: counted in place, since its request may be read lazily.
      exchange = await attempt();
      exchange.retries = retried + 1;
    }
  }

  /**
   * A request on a reused keep-alive connection that the server had closed never reached it: a GET is sent
   * once more on a fresh connection; a DELETE is not, since it may have been carried out.
   */
  resendsOnFreshConnection(method: string, exchange: Exchange): boolean {
    return exchange.staleConnection === true && method === "GET";
  }

  /**
   * How long to wait before sending the request again after this answer, when it is retried: a 429, while
   * fewer than the limit's retries were made (`retried`). Undefined when it is not retried.
   */
  waitBeforeRetry(exchange: Exchange, retried: number): number | undefined {
    const limits = this.tooManyRequests;
    if (!limits || exchange.response?.status !== 429 || retried >= limits.max) return undefined;
    return retryAfterWait(exchange.response.headers["retry-after"], retried, limits.maxWaitMs);
  }
}

/**
 * Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3), capped; a back-off doubling from one second
 * with each retry when it is absent.
 */
export function retryAfterWait(header: string | undefined, retried: number, maxWaitMs: number): number {
  let wait = FIRST_BACKOFF_MS * 2 ** retried;
  if (header !== undefined && /^\d+$/.test(header.trim())) wait = Number(header.trim()) * 1000;
  else if (header !== undefined && !Number.isNaN(Date.parse(header))) wait = Date.parse(header) - Date.now();
  return Math.min(Math.max(wait, 0), maxWaitMs);
}
