import assert from "node:assert/strict";
import { once } from "node:events";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { bundledApp, DEV_KEY } from "./support.ts";

const AUTH = { authorization: `Bearer ${DEV_KEY}` };

function call(
  agent: Agent,
  url: string,
  method = "GET",
  headers: Record<string, string> = AUTH,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { agent, method, headers }, (incoming) => {
      let body = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk) => {
        body += chunk;
      });
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body }));
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("concurrency and load", () => {
  it("lets exactly one of 500 concurrent cancels of one pending order succeed", async (t) => {
    const mock = await startMockProcess(["--quiet"]);
    const agent = new Agent({ keepAlive: true, maxSockets: 500 });
    try {
      const statuses = await Promise.all(
        Array.from({ length: 500 }, () =>
          call(agent, `${mock.url}/store/orders/5`, "DELETE").then((r) => r.status),
        ),
      );
      const counts = Object.fromEntries(
        [204, 409].map((status) => [status, statuses.filter((s) => s === status).length]),
      );
      t.diagnostic(`500 concurrent cancels: ${JSON.stringify(counts)}`);
      assert.deepEqual(counts, { 204: 1, 409: 499 });
      assert.equal((await call(agent, `${mock.url}/store/orders/5`, "DELETE")).status, 409);
    } finally {
      agent.destroy();
      await mock.stop();
    }
  });

  it("gives every client a consistent list while others cancel", async () => {
    const mock = await startMockProcess(["--quiet"]);
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    try {
      const initial = (await call(agent, `${mock.url}/store/orders`)).body;
      const ids = (JSON.parse(initial) as Array<{ id: number }>).map((order) => order.id);
      const lists: string[] = [];
      const cancels: number[] = [];
      await Promise.all(
        Array.from({ length: 50 }, async (_, client) => {
          for (let step = 0; step < 20; step++) {
            if ((client + step) % 2 === 0) lists.push((await call(agent, `${mock.url}/store/orders`)).body);
            else
              cancels.push(
                (await call(agent, `${mock.url}/store/orders/${(client + step) % 11}`, "DELETE")).status,
              );
          }
        }),
      );
      assert.equal(lists.length, 500);
      for (const list of lists) {
        assert.equal(list, initial, "a cancel never shows half-done in a list");
        const listed = (JSON.parse(list) as Array<{ id: number }>).map((order) => order.id);
        assert.equal(new Set(listed).size, listed.length, "no duplicates");
        assert.deepEqual(listed, ids);
      }
      assert.ok(cancels.every((status) => [204, 404, 409].includes(status)));
      assert.equal(
        cancels.filter((status) => status === 204).length,
        6,
        "each of the six pending orders (2, 3, 5, 7, 8, 10) is cancelled exactly once",
      );
    } finally {
      agent.destroy();
      await mock.stop();
    }
  });

  it("does not grow its heap over a soak of 30,000 requests", async (t) => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const app = await bundledApp();
    const base = `http://127.0.0.1:${app.port}/v1`;
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const mix = [
      () => call(agent, `${base}/store/orders`),
      () => call(agent, `${base}/store/orders/424242`, "DELETE"),
      () => call(agent, `${base}/store/orders/1`, "DELETE"),
      () => call(agent, `${base}/store/orders`, "GET", { authorization: "Bearer wrong" }),
      () => call(agent, `${base}/nowhere`),
    ];
    const run = async (count: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < count) {
            const index = next++;
            const { status } = await (mix[index % mix.length] as () => Promise<{ status: number }>)();
            assert.ok(status < 500);
          }
        }),
      );
    };
    try {
      await run(5_000); // warm-up: JIT, pools and caches settle before measuring
      gc();
      const before = process.memoryUsage().heapUsed;
      const started = performance.now();
      await run(30_000);
      const seconds = (performance.now() - started) / 1000;
      gc();
      const growth = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
      t.diagnostic(
        `soak: 30000 requests in ${seconds.toFixed(1)} s, heap ${(before / 1024 / 1024).toFixed(1)} MiB, change ${growth.toFixed(2)} MiB`,
      );
      assert.ok(growth < 4, `heap grew by ${growth.toFixed(2)} MiB`);
    } finally {
      agent.destroy();
      await app.close();
    }
  });

  it("on SIGTERM under load answers requests already received, refuses new connections and exits 0", async (t) => {
    const mock: MockProcess = await startMockProcess(["--quiet"]);
    const { port, hostname } = new URL(mock.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 20 });
    let stop = false;
    const outcomes = { ok: 0, refused: 0, serverErrors: 0 };
    const loops = Array.from({ length: 20 }, async () => {
      while (!stop) {
        try {
          const { status } = await call(agent, `${mock.url}/store/orders`);
          if (status >= 500) outcomes.serverErrors++;
          else outcomes.ok++;
        } catch {
          outcomes.refused++;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    });

    // A request the server has received but cannot finish until its body arrives.
    const slow = connect(Number(port), hostname);
    await once(slow, "connect");
    let slowAnswer = "";
    slow.on("data", (data) => {
      slowAnswer += data;
    });
    // A reset of the held request is a finding of this test, said as such, not an uncaught socket error.
    let slowError: NodeJS.ErrnoException | undefined;
    slow.on("error", (error) => {
      slowError = error;
    });
    slow.write(
      `DELETE /v1/store/orders/2 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${DEV_KEY}\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhalf-`,
    );

    // Under load by count, not by time: a hundred answers, however long a busy machine takes.
    while (outcomes.ok < 100) await new Promise((resolve) => setTimeout(resolve, 10));
    const signalled = performance.now();
    let exitedYet = false;
    const exited = mock.stop("SIGTERM").then((code) => {
      exitedYet = true;
      return code;
    });
    // The held request keeps the process alive, so its listener must close while it waits.
    const attempt = () =>
      new Promise<string>((resolve) => {
        const probe = connect(Number(port), hostname);
        probe.on("connect", () => {
          probe.destroy();
          resolve("connected");
        });
        probe.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
      });
    let refusal = await attempt();
    // A probe the kernel queued just as the listener closed is reset rather than refused: try again.
    for (let tries = 0; refusal !== "ECONNREFUSED" && !exitedYet && tries < 500; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      refusal = await attempt();
    }
    assert.equal(exitedYet, false, "the process waited for the request it had received");
    // The rest of the body, the connection left open as a client does while it waits for its answer.
    // Its close, which follows the answer's end and also a reset: a connection closed unanswered is the
    // finding the assertions below name, never a wait that lasts for ever.
    const answered = once(slow, "close");
    slow.write("done!");
    await answered;
    slow.end();
    const code = await exited;
    const exitMs = performance.now() - signalled;
    stop = true;
    await Promise.all(loops);
    agent.destroy();

    t.diagnostic(`shutdown: ${JSON.stringify(outcomes)}, exit ${code} after ${exitMs.toFixed(0)} ms`);
    assert.equal(refusal, "ECONNREFUSED", "new connections are refused once shutting down");
    assert.equal(slowError?.code, undefined, "the request received before SIGTERM was not reset");
    assert.match(slowAnswer, /^HTTP\/1\.1 204 /, "the request received before SIGTERM was answered");
    assert.match(slowAnswer, /\r\nconnection: close\r\n/i, "and its connection closed after it");
    assert.equal(code, 0);
    assert.equal(outcomes.serverErrors, 0);
  });
});
