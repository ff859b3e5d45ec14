import assert from "node:assert/strict";
import { once } from "node:events";
import { Agent, request } from "node:http";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { residentMemory } from "../../test-support/process-memory.ts";
import { startMockProcess } from "../../test-support/spawn-mock.ts";
import { BODY_LIMIT_BYTES, MAX_HEADER_BYTES } from "../app.ts";
import { bundledApp, DEV_KEY, type ListeningApp } from "./support.ts";

/** Sends raw bytes and collects everything until the server closes the connection (or the deadline). */
async function exchangeRaw(port: number, chunks: Array<string | { pauseMs: number }>, deadlineMs = 5_000) {
  const socket: Socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  let received = "";
  socket.on("data", (data) => {
    received += data;
  });
  const closed = once(socket, "close").then(() => true);
  const started = Date.now();
  for (const chunk of chunks) {
    if (typeof chunk === "string") {
      if (!socket.destroyed) socket.write(chunk);
    } else {
      await new Promise((resolve) => setTimeout(resolve, chunk.pauseMs));
    }
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), deadlineMs);
  });
  const wasClosed = await Promise.race([closed, deadline]);
  clearTimeout(timer);
  socket.destroy();
  return { received, closed: wasClosed, afterMs: Date.now() - started };
}

function statusAndBody(raw: string): { status: number; body: Record<string, unknown> } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
  const body = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  return { status, body: JSON.parse(body) };
}

describe("limits and slow clients (real sockets)", () => {
  let app: ListeningApp;
  let port: number;
  before(async () => {
    app = await bundledApp({ headersTimeoutMs: 500, requestTimeoutMs: 1_000, timeoutCheckIntervalMs: 100 });
    port = app.port;
  });
  after(() => app.close());

  it(`answers request heads over ${MAX_HEADER_BYTES} bytes with a 431 Error record and closes`, async () => {
    const big = "x".repeat(MAX_HEADER_BYTES + 100);
    const result = await exchangeRaw(port, [
      `GET /v1/store/orders HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${DEV_KEY}\r\nX-Big: ${big}\r\n\r\n`,
    ]);
    const { status, body } = statusAndBody(result.received);
    assert.equal(status, 431);
    assert.deepEqual(body, {
      code: "headers_too_large",
      message: `Request headers are limited to ${MAX_HEADER_BYTES} bytes.`,
      status: 431,
    });
    assert.ok(result.closed);
  });

  it(`refuses bodies over ${BODY_LIMIT_BYTES} bytes with 413 before reading them, and closes`, async () => {
    const length = 50 * 1024 * 1024;
    const result = await exchangeRaw(port, [
      `DELETE /v1/store/orders/2 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${DEV_KEY}\r\nContent-Type: text/plain\r\nContent-Length: ${length}\r\n\r\n`,
      "x".repeat(1024),
    ]);
    const { status, body } = statusAndBody(result.received);
    assert.equal(status, 413);
    assert.equal(body.code, "payload_too_large");
    assert.match(result.received, /\r\nconnection: close\r\n/i);
    assert.ok(result.closed, "the rest of the 50 MB is never read");
    const still = await app.inject({
      method: "DELETE",
      url: "/v1/store/orders/2",
      headers: { authorization: `Bearer ${DEV_KEY}` },
    });
    assert.equal(still.statusCode, 204, "the refused request cancelled nothing");
  });

  it("lets a client that is still sending its oversized body read the 413 (no reset)", async () => {
    // The client reads nothing until it has sent 256 KiB: a server that closed with those bytes unread would
    // make the kernel reset the connection, and the client would lose the 413 it had not read yet.
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    socket.pause();
    let failure: string | undefined;
    socket.on("error", (error: NodeJS.ErrnoException) => {
      failure ??= error.code;
    });
    const closed = new Promise((resolve) => socket.on("close", resolve));
    socket.write(
      `DELETE /v1/store/orders/2 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${DEV_KEY}\r\nContent-Type: text/plain\r\nContent-Length: ${1024 * 1024}\r\n\r\n`,
    );
    for (let sent = 0; sent < 256 * 1024 && !failure; sent += 16 * 1024) {
      socket.write("x".repeat(16 * 1024));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    let received = "";
    socket.on("data", (data) => {
      received += data;
    });
    socket.resume();
    socket.end();
    await closed;
    assert.equal(failure, undefined, "the connection was reset");
    assert.equal(statusAndBody(received).status, 413);
  });

  it("cuts off a client that never finishes its request head", async () => {
    const result = await exchangeRaw(
      port,
      ["GET /v1/store/orders HTTP/1.1\r\nHost: t\r\n", { pauseMs: 2_000 }],
      5_000,
    );
    assert.ok(result.closed, "the connection was closed");
    assert.ok(result.afterMs < 4_000, `closed after ${result.afterMs} ms`);
    if (result.received) assert.equal(statusAndBody(result.received).status, 408);
  });

  it("cuts off a client that sends its body too slowly", async () => {
    const result = await exchangeRaw(port, [
      `DELETE /v1/store/orders/3 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${DEV_KEY}\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nabc`,
      { pauseMs: 2_500 },
      "defghij",
    ]);
    assert.ok(result.closed);
    const { status, body } = statusAndBody(result.received);
    assert.equal(status, 408);
    assert.equal(body.code, "request_timeout");
  });

  it("answers malformed HTTP and undecodable paths with 400 Error records", async () => {
    const garbage = await exchangeRaw(port, ["NOT-HTTP at all\r\n\r\n"]);
    assert.equal(statusAndBody(garbage.received).status, 400);
    assert.equal(statusAndBody(garbage.received).body.code, "bad_request");
    const badPath = await app.inject({
      method: "DELETE",
      url: "/v1/store/orders/%zz",
      headers: { authorization: `Bearer ${DEV_KEY}` },
    });
    assert.equal(badPath.statusCode, 400);
    assert.equal(JSON.parse(badPath.body).code, "bad_request");
    assert.equal(JSON.parse(badPath.body).status, 400);
  });
});

describe("connections past --max-connections (the real process)", () => {
  it("a new client is served while a crowd of idle connections is open: the oldest idle ones are closed", async () => {
    const mock = await startMockProcess(["--quiet", "--max-connections", "100"]);
    const sockets: Socket[] = [];
    try {
      const { port } = new URL(mock.url);
      const open = async () => {
        const socket = connect(Number(port), "127.0.0.1");
        socket.on("error", () => {});
        await once(socket, "connect");
        sockets.push(socket);
        return socket;
      };
      // Fifty kept alive after an answer, then a hundred that never send a request head.
      for (let index = 0; index < 50; index++) {
        const socket = await open();
        socket.write("GET /__health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        await once(socket, "data");
      }
      const closed = sockets.map((socket) => once(socket, "close"));
      for (let index = 0; index < 100; index++) await open();
      // Each of the hundred opened past the cap closed one of the fifty, oldest first.
      await Promise.all(closed);
      const answer = await fetch(`${mock.url}/store/orders`, {
        headers: { authorization: `Bearer ${DEV_KEY}`, connection: "close" },
      });
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(await answer.text()).length, 12);
      assert.equal(sockets.slice(50).filter((socket) => socket.destroyed).length <= 1, true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await mock.stop();
    }
  });
});

describe("a flood of unauthenticated requests (the real process)", () => {
  it("keeps nothing of them: no session, no journal entry, and memory within a bound", async () => {
    const mock = await startMockProcess(["--quiet"]);
    try {
      const pid = mock.child.pid as number;
      const { port } = new URL(mock.url);
      const agent = new Agent({ keepAlive: true, maxSockets: 32 });
      const send = (path: string, headers: Record<string, string>, method = "GET") =>
        new Promise<number>((resolve, reject) => {
          const sent = request({ host: "127.0.0.1", port, path, method, headers, agent }, (answer) => {
            answer.resume();
            answer.on("end", () => resolve(answer.statusCode ?? 0));
          });
          sent.on("error", reject);
          sent.end();
        });
      // Warm up, so that the bound measures what the flood keeps rather than the first requests' code.
      for (let index = 0; index < 200; index++) await send("/v1/store/orders", {});
      const before = residentMemory(pid).now;
      const longPath = `/v1/store/orders/${"9".repeat(14 * 1024)}`;
      let next = 0;
      const statuses = new Set<number>();
      const worker = async () => {
        while (next < 6000) {
          const index = next++;
          statuses.add(
            await send(
              index % 2 === 0 ? longPath : "/v1/store/orders",
              {
                "x-mock-session": `stranger-${index % 1000}`,
                ...(index % 3 === 0 ? { authorization: "Bearer wrong" } : {}),
              },
              index % 2 === 0 ? "DELETE" : "GET",
            ),
          );
        }
      };
      await Promise.all(Array.from({ length: 32 }, worker));
      agent.destroy();
      assert.deepEqual([...statuses], [401]);
      const sessions = await fetch(`${new URL(mock.url).origin}/__control/sessions`);
      assert.equal(await sessions.text(), "[]", "no session was made for a stranger");
      const journal = await fetch(`${new URL(mock.url).origin}/__control/requests`);
      assert.equal(journal.headers.get("x-mock-refused-requests"), "6200");
      const grown = residentMemory(pid).peak - before;
      // 6,000 requests of 14 KiB paths would keep 42 MiB of journal alone, with a thousand sessions besides.
      assert.ok(grown < 48 * 1024 * 1024, `the mock grew by ${Math.round(grown / 1024 / 1024)} MiB`);
    } finally {
      await mock.stop();
    }
  });
});

describe("orders created and removed again and again (the real process)", () => {
  it("hold the memory of what the world has now, not of its history, in the default world and a session", async () => {
    const mock = await startMockProcess(["--quiet", "--max-memory", "16MiB"]);
    try {
      const pid = mock.child.pid as number;
      const origin = new URL(mock.url).origin;
      const ids = Array.from({ length: 100 }, (_, index) => 1_000 + index);
      const body = JSON.stringify({ create: ids.map((id) => ({ id, status: "pending" })), remove: ids });
      const rounds = async (count: number, session?: string) => {
        for (let round = 0; round < count; round++) {
          const answer = await fetch(`${origin}/__control/orders`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(session ? { "x-mock-session": session } : {}),
            },
            body,
          });
          assert.equal(answer.status, 200, await answer.text());
        }
      };
      // Past the first rounds the heap has the size it works at: growth after that is what the rounds keep.
      await rounds(1_000);
      await rounds(1_000, "s1");
      const before = residentMemory(pid).now;
      await rounds(5_000);
      await rounds(5_000, "s1");
      const grown = residentMemory(pid).now - before;
      // Each round kept a hundred places before: about 9 MiB per thousand rounds, 90 MiB here. The bound
      // leaves room for a collector that runs late on a busy machine.
      assert.ok(grown < 40 * 1024 * 1024, `the mock grew by ${Math.round(grown / 1024 / 1024)} MiB`);
    } finally {
      await mock.stop();
    }
  });
});
