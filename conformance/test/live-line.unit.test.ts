import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type ForwardedExchange,
  type JudgeContext,
  type JudgedExchange,
  judgeExchange,
} from "../proxy/judged-exchange.ts";
import { jsonLine, liveLine } from "../proxy/live-line.ts";

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

  it("says the status the client was sent, and that the body was cut, when the answer broke off after its head", () => {
    const forwarded: ForwardedExchange = {
      seq: 3,
      method: "GET",
      url: "/v1/store/orders",
      token: undefined,
      secrets: [],
      session: undefined,
      recorded: () => ({ method: "GET", path: "/v1/store/orders", headers: {} }),
      startedAt: 0,
      durationMs: 12,
      upstreamError: "the answer broke off: aborted",
      sentStatus: 200,
    };
    const cut = judgeExchange(forwarded, { read: () => undefined } as unknown as JudgeContext);
    assert.equal(cut.ref.label, "#3 GET /v1/store/orders → 200, body cut");
    const line = JSON.parse(jsonLine(cut));
    assert.equal(line.status, 200);
    assert.equal(line.bodyCut, true);
    assert.equal(
      liveLine(cut, { color: false }),
      "! #3 GET /v1/store/orders 200 12 ms body cut: the answer broke off: aborted\n",
    );
    const { sentStatus: _, ...unanswered } = forwarded;
    const none = judgeExchange(unanswered, { read: () => undefined } as unknown as JudgeContext);
    assert.equal(JSON.parse(jsonLine(none)).status, 502);
    assert.equal(JSON.parse(jsonLine(none)).bodyCut, undefined);
    assert.match(liveLine(none, { color: false }), / 502 12 ms no answer from the upstream: /);
  });
});
