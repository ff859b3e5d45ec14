import assert from "node:assert/strict";
import { EventEmitter, once } from "node:events";
import { readdirSync } from "node:fs";
import { createServer } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { describe, it } from "node:test";
import { type ProxyProcess, startSourceProxy } from "../../test-support/proxy-process.ts";

/**
 * An upstream that answers 404 at once, without reading a request's body, as Node's own server does; it
 * counts the proxy's connections open to it.
 */
async function startEarlyAnswering() {
  const events = new EventEmitter();
  let open = 0;
  const server = createServer((_request, response) => {
    response.writeHead(404, { "content-type": "application/json" });
    response.end('{"code":"not_found","message":"no such route","status":404}');
  });
  // Waiting for the rest of a body as long as it takes: Node would otherwise close a connection idle 5 s
  // after its answer, hiding a proxy that never ends its side.
  server.keepAliveTimeout = 0;
  server.on("connection", (socket: Socket) => {
    open++;
    socket.once("close", () => {
      open--;
      events.emit("closed");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    open: () => open,
    allClosed: async () => {
      while (open > 0) await once(events, "closed");
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A client connection sending a request whose body never comes whole: `answered` resolves once the answer's
 * head came back, `ended` to all that came once the proxy closed the connection.
 */
function drippingClient(proxy: ProxyProcess) {
  const { port, host } = new URL(proxy.url);
  const socket = connect(Number(port), "127.0.0.1");
  let received = "";
  const answers = new EventEmitter();
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
    if (received.includes("\r\n\r\n")) answers.emit("head");
  });
  // A connection closed unread may be reset under a request already sent.
  socket.on("error", () => {});
  socket.write(`POST /v1/x HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 100000\r\n\r\nabc`);
  const ended = new Promise<string>((resolve) => socket.once("close", () => resolve(received)));
  const answered = once(answers, "head");
  return { socket, answered, ended };
}

describe("requests the upstream answers before their body has ended", () => {
  it("keep their connections busy: past --max-connections a new one is closed unread", async () => {
    const upstream = await startEarlyAnswering();
    const proxy = await startSourceProxy(["--upstream", upstream.url, "--max-connections", "4"]);
    try {
      const dripping = Array.from({ length: 4 }, () => drippingClient(proxy));
      for (const client of dripping) await client.answered;
      const crowded = drippingClient(proxy);
      assert.equal(
        await crowded.ended,
        "",
        "a connection past the cap, all of them sending a body, is closed unread",
      );
      for (const client of dripping)
        assert.equal(client.socket.destroyed, false, "the answered ones stay open");
      for (const client of dripping) client.socket.destroy();
    } finally {
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
  });

  it("end their upstream request when their client leaves: no connection to the upstream outlives them", {
    timeout: 30_000,
  }, async () => {
    const upstream = await startEarlyAnswering();
    const proxy = await startSourceProxy(["--upstream", upstream.url]);
    try {
      const dripping = Array.from({ length: 8 }, () => drippingClient(proxy));
      for (const client of dripping) await client.answered;
      // Reset, as a client that leaves with bytes unread does.
      for (const client of dripping) client.socket.resetAndDestroy();
      // Without the fix the upstream connections wait for the rest of each body, and this never settles.
      await upstream.allClosed();
      assert.equal(upstream.open(), 0);
    } finally {
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
  });

  it("under a low file-descriptor limit, the default cap leaves descriptors free: a client past it is closed, then served", {
    timeout: 60_000,
  }, async () => {
    const upstream = await startEarlyAnswering();
    const proxy = await startSourceProxy(["--upstream", upstream.url], { shellPrefix: "ulimit -n 64" });
    const dripping: ReturnType<typeof drippingClient>[] = [];
    try {
      // Each is answered or closed unread; one the proxy could not take for want of a descriptor is neither.
      for (let count = 0; count < 80; count++) {
        const client = drippingClient(proxy);
        dripping.push(client);
        await Promise.race([client.answered, client.ended]);
      }
      // What the proxy holds, each client's connection and its upstream one: spent whole, it could open no
      // file, no upstream connection for anyone.
      const held = readdirSync(`/proc/${proxy.child.pid}/fd`).length;
      assert.ok(held <= 59, `${held} of 64 descriptors held: some stay free`);
      const crowded = drippingClient(proxy);
      assert.equal(
        await crowded.ended,
        "",
        "past the cap, every connection busy, a new one is closed unread",
      );
      for (const client of dripping) client.socket.resetAndDestroy();
      await upstream.allClosed();
      const served = await fetch(`${proxy.url}/store/orders`);
      assert.equal(served.status, 404, "the upstream's answer");
    } finally {
      for (const client of dripping) client.socket.destroy();
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
  });
});
