import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ControlRequest } from "../../contract/control-client.ts";
import { CONTROL_TRANSPORT, type HookContext } from "../target/hook-types.ts";
import { provision, release } from "../target/mock-control-hooks.ts";

describe("the mock-control hook", () => {
  it("sends its control calls by the run's transport when it has one, never by fetch", async () => {
    const sent: ControlRequest[] = [];
    const context: HookContext = {
      baseUrl: "http://127.0.0.1:9/v1",
      apiKey: "dev-key-123",
      session: "s1",
      fetch: () => Promise.reject(new Error("fetch was called")),
      [CONTROL_TRANSPORT]: async (request) => {
        sent.push(request);
        // Ids past 2^53 read as their digits.
        const body = request.body ?? "";
        const created = [...body.matchAll(/"id":(\d+)/g)].map((match) => match[1]);
        const removed = /"remove":\[([\d,]*)\]/.exec(body)?.[1] ?? "";
        const text = `{"created":[${created.join(",")}],"removed":[${removed}]}`;
        return { status: 200, text, headers: { get: () => null } };
      },
    };
    const made = await provision(context, { pending: 2, shipped: 1 });
    assert.equal(made.pending?.length, 2);
    assert.equal(made.shipped?.length, 1);
    await release(context, made.pending ?? []);
    assert.deepEqual(
      sent.map((request) => [request.method, request.url, request.headers["x-mock-session"]]),
      [
        ["POST", "http://127.0.0.1:9/__control/orders", "s1"],
        ["POST", "http://127.0.0.1:9/__control/orders", "s1"],
      ],
    );
    assert.equal(/"remove":\[([\d,]*)\]/.exec(sent[1]?.body ?? "")?.[1], made.pending?.join(","));
  });

  it("gives up on a control API that creates none of the orders asked for, saying so", {
    timeout: 20_000,
  }, async () => {
    let calls = 0;
    const context: HookContext = {
      baseUrl: "http://127.0.0.1:9/v1",
      apiKey: "dev-key-123",
      fetch: () => Promise.reject(new Error("fetch was called")),
      [CONTROL_TRANSPORT]: async () => {
        calls++;
        return { status: 200, text: '{"created":[],"removed":[]}', headers: { get: () => null } };
      },
    };
    await assert.rejects(
      provision(context, { pending: 8, shipped: 0 }),
      /created none of the orders asked for/,
    );
    assert.equal(calls, 3);
  });

  it("says a refused control call as the control client's error", async () => {
    const context: HookContext = {
      baseUrl: "http://127.0.0.1:9/v1",
      apiKey: "dev-key-123",
      fetch: () => Promise.reject(new Error("fetch was called")),
      [CONTROL_TRANSPORT]: async () => ({
        status: 401,
        text: '{"code":"unauthorized","message":"control token needed","status":401}',
        headers: { get: () => null },
      }),
    };
    await assert.rejects(release(context, ["7"]), { name: "ControlError", status: 401 });
  });
});
