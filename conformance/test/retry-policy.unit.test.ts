import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Exchange } from "../judging/exchange.ts";
import { RetryPolicy, retryAfterWait } from "../target/retry-policy.ts";

const request = { method: "GET", path: "/v1/store/orders", headers: {} };
const answered = (status: number, headers: Record<string, string> = {}): Exchange => ({
  request,
  response: { status, headers, body: "" },
});

describe("RetryPolicy", () => {
  it("resends only a GET whose kept-alive connection had been closed, never a DELETE", () => {
    const policy = new RetryPolicy(undefined);
    const stale: Exchange = { request, error: "ECONNRESET: socket hang up", staleConnection: true };
    assert.equal(policy.resendsOnFreshConnection("GET", stale), true);
    assert.equal(policy.resendsOnFreshConnection("DELETE", stale), false);
    assert.equal(policy.resendsOnFreshConnection("GET", { ...stale, staleConnection: undefined }), false);
  });

  it("retries a 429 up to the limit's retries, and no other answer", () => {
    const policy = new RetryPolicy({ max: 2, maxWaitMs: 10_000 });
    const tooMany = answered(429, { "retry-after": "3" });
    assert.deepEqual(
      [0, 1, 2].map((retried) => policy.waitBeforeRetry(tooMany, retried)),
      [3000, 3000, undefined],
    );
    assert.equal(policy.waitBeforeRetry(answered(503, { "retry-after": "3" }), 0), undefined);
    assert.equal(policy.waitBeforeRetry({ request, error: "ECONNREFUSED" }, 0), undefined);
    assert.equal(new RetryPolicy(undefined).waitBeforeRetry(tooMany, 0), undefined);
  });
});

describe("retryAfterWait", () => {
  it("backs off from one second, doubling, within the cap, when there is no Retry-After", () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((retried) => retryAfterWait(undefined, retried, 5000)),
      [1000, 2000, 4000, 5000],
    );
  });

  it("reads Retry-After as seconds or as an HTTP date, a date past as no wait", () => {
    assert.equal(retryAfterWait(" 2 ", 0, 60_000), 2000);
    assert.equal(retryAfterWait(new Date(Date.now() + 3_600_000).toUTCString(), 0, 60_000), 60_000);
    assert.equal(retryAfterWait("Wed, 21 Oct 2015 07:28:00 GMT", 0, 60_000), 0);
  });

  it("waits between none and the cap whatever the target sends", () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(10), fc.nat(120_000), (header, retried, cap) => {
        const wait = retryAfterWait(header, retried, cap);
        return Number.isFinite(wait) && wait >= 0 && wait <= cap;
      }),
    );
  });
});
