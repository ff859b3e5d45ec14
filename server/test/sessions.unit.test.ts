import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MemoryState } from "../core/memory-state.ts";
import { loadDashboardAssets } from "../dashboard-assets.ts";
import { assertError, caseApi } from "./control-cases.ts";
import { bundledCore, controlContract } from "./support.ts";
import { coreTransport, type Transport } from "./transports.ts";

const ids = (text: string) => [...text.matchAll(/"id":(\d+)/g)].map((match) => match[1]);

async function statuses(transport: Transport, session: string | undefined): Promise<Record<string, string>> {
  const answer = await transport({
    method: "GET",
    path: "/__control/orders",
    headers: session ? { "x-mock-session": session } : {},
  });
  return Object.fromEntries(
    [...answer.text.matchAll(/"id":(\d+)[^}]*"status":"(\w+)"/g)].map((m) => [m[1], m[2]]),
  );
}

describe("sessions (in-process)", () => {
  it("two sessions driven concurrently never see each other's changes, nor the default world's", async () => {
    const transport = coreTransport(bundledCore());
    const alice = caseApi(transport, "alice");
    const bob = caseApi(transport, "bob");
    const [aliceAnswers, bobAnswers] = await Promise.all([
      Promise.all(["2", "3", "5"].map((id) => alice.send("DELETE", `/v1/store/orders/${id}`))),
      Promise.all(["2", "7"].map((id) => bob.send("DELETE", `/v1/store/orders/${id}`))),
      alice.send("DELETE", "/__control/orders/10"),
      bob.send("PUT", "/__control/orders/8", { body: { status: "shipped" } }),
    ]);
    assert.deepEqual(
      [...aliceAnswers, ...bobAnswers].map((answer) => answer.status),
      [204, 204, 204, 204, 204],
    );
    const seen = {
      alice: await statuses(transport, "alice"),
      bob: await statuses(transport, "bob"),
      shared: await statuses(transport, undefined),
    };
    assert.deepEqual(
      ["2", "3", "5", "7", "8", "10"].map((id) => [seen.alice[id], seen.bob[id], seen.shared[id]]),
      [
        ["cancelled", "cancelled", "pending"],
        ["cancelled", "pending", "pending"],
        ["cancelled", "pending", "pending"],
        ["pending", "cancelled", "pending"],
        ["pending", "shipped", "pending"],
        [undefined, "pending", "pending"],
      ],
    );
    const shared = caseApi(transport, "unused");
    assert.equal((await shared.send("DELETE", "/v1/store/orders/2", { defaultWorld: true })).status, 204);
    assert.equal((await alice.send("GET", "/__control/orders")).text.includes('"id":2,'), true);
    assert.equal(
      (await statuses(transport, "bob"))["2"],
      "cancelled",
      "bob's own cancel, not the default world's",
    );
  });

  it("an unchanged world, or one whose statuses alone changed, serves the seed's own list body", () => {
    const state = bundledCore().state as MemoryState;
    const seedBody = state.defaultWorld.store.listBody();
    const session = state.memorySessions.use("s", Date.now());
    assert.equal(session.store.listBody(), seedBody);
    session.store.cancel(2n);
    session.store.setStatus(3n, "shipped");
    assert.equal(session.store.listBody(), seedBody, "the same bytes, not a copy");
    assert.equal(session.store.changes, 2);
    session.store.removeOrder(1n);
    assert.notEqual(session.store.listBody(), seedBody);
    assert.equal(state.defaultWorld.store.listBody(), seedBody);
  });

  it("evicts the least recently used session past --max-sessions", async () => {
    let now = 1_000_000;
    const transport = coreTransport(bundledCore({ maxSessions: 2, clock: () => now }));
    const use = async (name: string) => {
      now += 1;
      return caseApi(transport, name).send("DELETE", "/v1/store/orders/2");
    };
    assert.equal((await use("a")).status, 204);
    assert.equal((await use("b")).status, 204);
    assert.equal((await use("a")).status, 409, "a is used again, so b is now the least recent");
    assert.equal((await use("c")).status, 204);
    const listed = await transport({ method: "GET", path: "/__control/sessions", headers: {} });
    assert.deepEqual(
      (JSON.parse(listed.text) as Array<{ name: string }>).map((session) => session.name),
      ["a", "c"],
    );
    assert.equal((await use("b")).status, 204, "b was evicted and starts again from the fixtures");
  });

  it("strangers without a key or control token never create, touch or evict a session", async () => {
    let now = 1_000_000;
    const transport = coreTransport(
      bundledCore({
        maxSessions: 2,
        clock: () => now,
        control: { contract: controlContract, assets: loadDashboardAssets(), token: "control-secret" },
      }),
    );
    const control = { authorization: "Bearer control-secret" };
    const victim = caseApi(transport, "victim");
    assert.equal((await victim.send("DELETE", "/v1/store/orders/2")).status, 204);
    const strangers = [];
    for (let index = 0; index < 50; index++) {
      now += 1;
      const stranger = caseApi(transport, `stranger-${index}`);
      strangers.push(
        stranger.send("GET", `/v1/store/orders/${"x".repeat(4096)}`, { key: null }),
        stranger.send("DELETE", "/v1/store/orders/2", { key: "wrong" }),
        stranger.send("GET", "/v1/store/orders", { key: "wrong", headers: { prefer: "code=200" } }),
        stranger.send("POST", "/__control/reset"),
        stranger.send("GET", "/__control/orders", { headers: { authorization: "Bearer wrong" } }),
      );
    }
    const answers = await Promise.all(strangers);
    assert.deepEqual(
      [...new Set(answers.map((answer) => answer.status))].sort(),
      [401, 405],
      "refused, or a path that is no operation",
    );
    const sessions = await transport({ method: "GET", path: "/__control/sessions", headers: control });
    assert.deepEqual(
      (JSON.parse(sessions.text) as Array<{ name: string }>).map((session) => session.name),
      ["victim"],
    );
    const journal = await victim.send("GET", "/__control/requests", { headers: control });
    assert.equal((JSON.parse(journal.text) as unknown[]).length, 1, "only the victim's own cancel");
    assert.equal(
      Number(journal.headers["x-mock-refused-requests"]),
      250,
      "every request without an accepted key or token is counted",
    );
    assert.equal((await victim.send("DELETE", "/v1/store/orders/2")).status, 409, "still cancelled");
  });

  it("evicts the least recently used sessions past what they may hold together (--max-memory), never the one in use", async () => {
    let now = 1_000_000;
    const transport = coreTransport(bundledCore({ maxSessionBytes: 100 * 1024, clock: () => now }));
    // Each session journals forty requests of long paths: about 47 KiB each.
    const fill = async (name: string) => {
      const api = caseApi(transport, name);
      assert.equal((await api.send("DELETE", "/v1/store/orders/2")).status, 204);
      for (let index = 0; index < 40; index++) {
        now += 10;
        await api.send("GET", `/v1/${"x".repeat(500)}${index}`);
      }
    };
    const names = async () =>
      (
        JSON.parse(
          (await transport({ method: "GET", path: "/__control/sessions", headers: {} })).text,
        ) as Array<{
          name: string;
        }>
      ).map((session) => session.name);
    await fill("a");
    await fill("b");
    assert.deepEqual(await names(), ["a", "b"], "two fit");
    await fill("c");
    assert.deepEqual(await names(), ["b", "c"], "the least recently used went for the third");
    assert.equal(
      (await caseApi(transport, "a").send("DELETE", "/v1/store/orders/2")).status,
      204,
      "a starts again from the fixtures",
    );
  });

  it("evicts sessions idle past --session-idle, and they start again from the fixtures", async () => {
    let now = 1_000_000;
    const transport = coreTransport(bundledCore({ sessionIdleMs: 60_000, clock: () => now }));
    const api = caseApi(transport, "idle");
    assert.equal((await api.send("DELETE", "/v1/store/orders/2")).status, 204);
    now += 60_000;
    assert.equal(
      (await api.send("DELETE", "/v1/store/orders/2")).status,
      409,
      "exactly the idle time: still live",
    );
    now += 60_001;
    const listed = await transport({ method: "GET", path: "/__control/sessions", headers: {} });
    assert.equal(listed.text, "[]");
    assert.equal((await api.send("DELETE", "/v1/store/orders/2")).status, 204);
  });

  it("with the control API off, X-Mock-Session and Prefer are ignored and /__control is a plain 404", async () => {
    const transport = coreTransport(bundledCore({ control: undefined }));
    const api = caseApi(transport, "not a valid name");
    assert.equal(
      (await api.send("DELETE", "/v1/store/orders/2", { headers: { prefer: "code=503" } })).status,
      204,
    );
    assert.equal(
      (await api.send("DELETE", "/v1/store/orders/2", { defaultWorld: true })).status,
      409,
      "one world",
    );
    assertError(await api.send("GET", "/__control/orders", { defaultWorld: true }), 404, "not_found");
    assertError(
      await api.send("PUT", "/__control/behaviour", { defaultWorld: true, body: {} }),
      404,
      "not_found",
    );
  });

  it("a control token guards every control request, and /v1 keys never open it", async () => {
    const transport = coreTransport(
      bundledCore({
        control: { contract: controlContract, assets: loadDashboardAssets(), token: "control-secret" },
      }),
    );
    const api = caseApi(transport, "guarded");
    const refused = assertError(
      await api.send("GET", "/__control/orders"),
      401,
      "unauthorized",
      /control token/,
    );
    assert.doesNotMatch(JSON.stringify(refused), /control-secret/);
    assertError(
      await api.send("GET", "/__control/orders", { headers: { authorization: "Bearer dev-key-123" } }),
      401,
      "unauthorized",
      /not valid/,
    );
    const allowed = await api.send("GET", "/__control/orders", {
      headers: { authorization: "Bearer control-secret" },
    });
    assert.equal(allowed.status, 200);
    assert.equal(ids(allowed.text).length, 12);
    assert.equal((await api.send("GET", "/v1/store/orders")).status, 200, "the API itself is unchanged");
    const page = await api.send("GET", "/__control/");
    assert.equal(page.status, 200, "the page holds no data: it loads, then asks for the token");
  });
});
