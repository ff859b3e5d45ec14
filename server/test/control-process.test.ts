import assert from "node:assert/strict";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { parseExact, stringifyExact } from "../../contract/exact-json.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { BUNDLED_FIXTURES } from "../options.ts";
import { WATCH_DEBOUNCE_MS, WATCH_SETTLE_MS } from "../watch.ts";
import { assertError, caseApi } from "./control-cases.ts";
import { DEV_KEY, writeFixture } from "./support.ts";
import { httpTransport } from "./transports.ts";

const AUTH = { authorization: `Bearer ${DEV_KEY}` };
const originOf = (mock: MockProcess) => new URL(mock.url).origin.replace("0.0.0.0", "127.0.0.1");

async function withMock(args: string[], run: (mock: MockProcess) => Promise<void>): Promise<void> {
  const mock = await startMockProcess(["--quiet", ...args]);
  try {
    await run(mock);
  } finally {
    await mock.stop();
  }
}

interface RawOutcome {
  status?: number;
  declaredLength?: number;
  received: number;
  error?: string;
}

/** A request as a plain HTTP client sees it: what arrived before the connection ended, and how it ended. */
function rawGet(origin: string, path: string, headers: Record<string, string>): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const outgoing = request(`${origin}${path}`, { headers, agent: false }, (incoming) => {
      let received = 0;
      const outcome = () => ({
        status: incoming.statusCode as number,
        declaredLength: Number(incoming.headers["content-length"]),
        received,
      });
      incoming.on("data", (chunk: Buffer) => {
        received += chunk.length;
      });
      incoming.on("end", () => resolve(outcome()));
      incoming.on("error", (error) => resolve({ ...outcome(), error: error.message }));
    });
    outgoing.on("error", (error: NodeJS.ErrnoException) =>
      resolve({ received: 0, error: error.code ?? error.message }),
    );
    outgoing.end();
  });
}

/** Polls until `check` holds, for changes the process makes on its own time (file watching). */
async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  for (const started = Date.now(); Date.now() - started < timeoutMs; await sleep(50)) {
    if (await check()) return;
  }
  assert.fail(`not within ${timeoutMs} ms: ${what}`);
}

describe("the control API in the real process", () => {
  it("carries out faults as a raw client sees them: close answers nothing, truncate breaks the body off", async () => {
    await withMock([], async (mock) => {
      const origin = originOf(mock);
      const api = caseApi(httpTransport(origin), "faults");
      const rules = {
        rules: [
          { operation: "listOrders", fault: "close", times: 1 },
          { operation: "listOrders", fault: "truncate", times: 1 },
          { operation: "cancelOrder", fault: "close", times: 1 },
        ],
      };
      assert.equal((await api.send("PUT", "/__control/behaviour", { body: rules })).status, 200);
      const headers = { ...AUTH, "x-mock-session": "faults" };
      const closed = await rawGet(origin, "/v1/store/orders", headers);
      assert.equal(closed.status, undefined, "no status line at all");
      assert.match(closed.error ?? "", /ECONNRESET|socket hang up/);

      const truncated = await rawGet(origin, "/v1/store/orders", headers);
      assert.equal(truncated.status, 200);
      const full = (await api.send("GET", "/v1/store/orders")).text;
      assert.equal(truncated.declaredLength, Buffer.byteLength(full), "the head promises the whole body");
      assert.equal(truncated.received, Math.floor(Buffer.byteLength(full) / 2));
      assert.match(truncated.error ?? "", /aborted/);

      const cancelClosed = await new Promise<string>((resolve) => {
        const outgoing = request(
          `${origin}/v1/store/orders/2`,
          { method: "DELETE", headers, agent: false },
          () => resolve("answered"),
        );
        outgoing.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        outgoing.end();
      });
      assert.match(cancelClosed, /ECONNRESET|socket hang up/);
      assert.equal((await api.send("DELETE", "/v1/store/orders/2")).status, 204, "the fault changed nothing");

      const journal = JSON.parse((await api.send("GET", "/__control/requests")).text) as Array<
        Record<string, unknown>
      >;
      assert.deepEqual(
        journal.slice(0, 2).map(({ status, fault }) => ({ status, fault })),
        [
          { status: null, fault: "close" },
          { status: 200, fault: "truncate" },
        ],
      );
      assert.equal((await api.send("GET", "/v1/store/orders")).status, 200, "the mock serves on");
    });
  });

  it("evicts sessions idle past a short --session-idle", async () => {
    await withMock(["--session-idle", "300ms"], async (mock) => {
      const api = caseApi(httpTransport(originOf(mock)), "short-lived");
      assert.equal((await api.send("DELETE", "/v1/store/orders/2")).status, 204);
      assert.equal((await api.send("DELETE", "/v1/store/orders/2")).status, 409);
      await sleep(450);
      assert.equal((await api.send("GET", "/__control/sessions", { defaultWorld: true })).text, "[]");
      assert.equal((await api.send("DELETE", "/v1/store/orders/2")).status, 204, "a fresh world");
    });
  });

  it("--no-control: /__control is a plain 404, X-Mock-Session and Prefer are ignored", async () => {
    await withMock(["--no-control"], async (mock) => {
      assert.match(mock.output(), /control API: off \(--no-control\)/);
      const api = caseApi(httpTransport(originOf(mock)), "ignored");
      assertError(await api.send("GET", "/__control/orders"), 404, "not_found");
      assert.equal(
        (await api.send("GET", "/v1/store/orders", { headers: { prefer: "code=503" } })).status,
        200,
      );
      assert.equal((await api.send("DELETE", "/v1/store/orders/2")).status, 204);
      assert.equal(
        (await api.send("DELETE", "/v1/store/orders/2", { defaultWorld: true })).status,
        409,
        "one world",
      );
    });
  });

  it("bound beyond loopback: off without a token; with one, every control request needs it", async () => {
    await withMock(["--host", "0.0.0.0"], async (mock) => {
      assert.match(mock.output(), /control API: off: bound to 0\.0\.0\.0 without --control-token/);
      const api = caseApi(httpTransport(originOf(mock)), "open");
      assertError(await api.send("GET", "/__control/orders"), 404, "not_found");
    });
    const token = "control-token-for-the-test";
    const mock = await startMockProcess(["--host", "0.0.0.0", "--log-level", "trace"], {
      PETSTORE_CONTROL_TOKEN: token,
    });
    try {
      assert.match(
        mock.output(),
        /control API: http:\/\/0\.0\.0\.0:\d+\/__control \(needs the control token\)/,
      );
      const api = caseApi(httpTransport(originOf(mock)), "guarded");
      assertError(await api.send("GET", "/__control/orders"), 401, "unauthorized");
      assertError(await api.send("GET", "/__control/orders", { headers: AUTH }), 401, "unauthorized");
      const allowed = await api.send("GET", "/__control/orders", {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(allowed.status, 200);
      await sleep(100);
      assert.doesNotMatch(mock.output(), new RegExp(token), "the token is never printed or logged");
    } finally {
      await mock.stop();
    }
  });
});

describe("--watch", () => {
  // Read and written exactly: the bundled orders include ids above 2^53.
  const bundled = parseExact(readFileSync(BUNDLED_FIXTURES, "utf8")) as {
    apiKeys: string[];
    orders: unknown[];
  };
  const world = (orders: unknown[]) => `${stringifyExact({ ...bundled, orders })}\n`;
  const listIds = async (origin: string, session?: string) =>
    [
      ...(
        await (
          await fetch(`${origin}/v1/store/orders`, {
            headers: { ...AUTH, ...(session ? { "x-mock-session": session } : {}) },
          })
        ).text()
      ).matchAll(/"id":(\d+)/g),
    ].map((match) => match[1]);

  /** A mock watching a fixture file of its own, seeded with the bundled orders. */
  async function withWatchedMock(run: (mock: MockProcess, path: string) => Promise<void>): Promise<void> {
    const path = writeFixture(world(bundled.orders));
    const mock = await startMockProcess(["--quiet", "--watch", "--fixtures", path]);
    try {
      await run(mock, path);
    } finally {
      await mock.stop();
    }
  }

  it("reloads a valid edit into the default world and new sessions; existing sessions keep theirs", () =>
    withWatchedMock(async (mock, path) => {
      const origin = originOf(mock);
      assert.match(mock.output(), /fixtures: .* \(12 orders\), watched/);
      assert.equal((await listIds(origin, "before")).length, 12, "a session made before the edit");
      // An editor's atomic save: write a temporary file, then rename it over the watched one.
      writeFileSync(`${path}.tmp`, world(bundled.orders.slice(0, 3)));
      renameSync(`${path}.tmp`, path);
      await eventually(
        async () => (await listIds(origin)).length === 3,
        "the default world has the new fixtures",
      );
      assert.match(mock.output(), /fixtures reloaded: .* \(3 orders\)/);
      assert.equal((await listIds(origin, "before")).length, 12, "an existing session keeps its fixtures");
      assert.equal((await listIds(origin, "after")).length, 3, "a new session starts from the new fixtures");
    }));

  it("keeps the previous fixtures on an invalid edit, with the start-up check's message", () =>
    withWatchedMock(async (mock, path) => {
      const broken = bundled.orders.map((order, index) =>
        index === 3 ? { ...(order as object), shipDate: "soon" } : order,
      );
      writeFileSync(path, world(broken));
      await eventually(
        async () => mock.output().includes("previous fixtures stay in use"),
        "the error is printed",
      );
      assert.match(
        mock.output(),
        /error: .*: invalid fixture:\n {2}- orders\[3\] \(id 4\), field "shipDate": must match format "date-time"/,
      );
      assert.equal((await listIds(originOf(mock))).length, 12);
    }));

  it("loads the end of a burst of writes, never a half-written state, and says no error of one", () =>
    withWatchedMock(async (mock, path) => {
      const text = world(bundled.orders.slice(0, 5));
      // An editor that truncates and writes in pieces: the half-written states must not be loaded.
      writeFileSync(path, "");
      for (let end = 0; end <= text.length; end += Math.ceil(text.length / 8))
        writeFileSync(path, text.slice(0, end));
      writeFileSync(path, text);
      await eventually(
        async () => (await listIds(originOf(mock))).length === 5,
        "the burst's result is loaded",
      );
      // A state read halfway is said to be invalid only if it stays so for WATCH_SETTLE_MS.
      await sleep(WATCH_SETTLE_MS + 400);
      const reloads = mock.output().match(/fixtures reloaded: .*/g) ?? [];
      assert.ok(reloads.length >= 1, mock.output());
      for (const line of reloads) assert.match(line, /\(5 orders\)$/);
      assert.doesNotMatch(mock.output(), /error:/);
    }));

  it("a save that stalls between truncating and writing: the empty file read meanwhile is no error", () =>
    withWatchedMock(async (mock, path) => {
      writeFileSync(path, "");
      // Longer than the watch waits before reading: the mock reads the empty file.
      await sleep(WATCH_DEBOUNCE_MS * 3);
      writeFileSync(path, world(bundled.orders.slice(0, 4)));
      await eventually(
        async () => (await listIds(originOf(mock))).length === 4,
        "the written file is loaded",
      );
      await sleep(WATCH_SETTLE_MS + 400);
      assert.doesNotMatch(mock.output(), /error:/);
    }));
});
