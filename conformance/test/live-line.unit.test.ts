import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JudgedExchange } from "../proxy/judged-exchange.ts";
import { jsonLine } from "../proxy/live-line.ts";

function judged(overrides: Partial<JudgedExchange>): JudgedExchange {
  return {
    ref: { seq: 7, label: "#7 GET /v1/store/orders → 200", startedAt: 0, endedAt: 1 },
    method: "GET",
    pathname: '/v1/store/"orders"',
    status: 200,
    durationMs: 1.26,
    operation: "listOrders",
    checks: [{ id: "status", status: "passed", message: "200" }],
    findings: [],
    ...overrides,
  } as JudgedExchange;
}

describe("live-line", () => {
  it("writes each verdict as one JSON line, with what failed and what was skipped", () => {
    const line = (overrides: Partial<JudgedExchange>) => {
      const text = jsonLine(judged(overrides));
      assert.ok(text.endsWith("}\n") && !text.slice(0, -1).includes("\n"), text);
      return JSON.parse(text);
    };
    assert.deepEqual(line({}), {
      seq: 7,
      method: "GET",
      path: '/v1/store/"orders"',
      status: 200,
      durationMs: 1.3,
      verdict: "passed",
      operation: "listOrders",
      failed: [],
      findings: [],
    });
    const skipped = { id: "body", status: "skipped", message: "past --max-body" } as const;
    assert.equal(line({ checks: [skipped] }).verdict, "partly-judged");
    const failed = { id: "body", status: "failed", message: "not an array", spec: "§4.1" } as const;
    const failing = line({ checks: [skipped, failed, failed] });
    assert.equal(failing.verdict, "failed");
    assert.deepEqual(failing.failed, [
      { id: "body", message: "not an array", spec: "§4.1" },
      { id: "body", message: "not an array", spec: "§4.1" },
    ]);
    assert.equal(line({ operation: undefined, notJudged: "CORS preflight" }).verdict, "not-judged");
    assert.equal(line({ upstreamError: "refused", status: undefined }).verdict, "no-answer");
  });
});
