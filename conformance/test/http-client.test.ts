import assert from "node:assert/strict";
import { createServer } from "node:http";
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net";
import { describe, it } from "node:test";
import { createHttpClient } from "../target/http-client.ts";

describe("createHttpClient", () => {
  it("a request http.request refuses to send fails at once with one line; its deadline never fires on it", async () => {
    let reached = 0;
    const server = createServer((_request, response) => {
      reached++;
      response.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    // A deadline far past the test's own timeout: the answer must not wait for it.
    const client = await createHttpClient(new URL(`http://127.0.0.1:${port}/v1`), {
      timeoutMs: 600_000,
      deadlineMs: 600_000,
    });
    try {
      const refused: Array<Record<string, string>> = [
        { "X-Key": "a\r\nInjected: 1" },
        { "X-Key": "\u043a\u043b\u044e\u0447" },
        { "X-\u043a": "v" },
      ];
      for (const [headers, fresh] of refused.flatMap((headers) => [
        [headers, true] as const,
        [headers, false] as const,
      ])) {
        const exchange = await client.send("GET", "/orders", headers, { fresh });
        assert.equal(exchange.response, undefined);
        assert.match(exchange.error ?? "", /^the request could not be sent: /);
        assert.equal(exchange.error?.split("\n").length, 1);
        assert.equal(exchange.errorCode !== undefined, true);
      }
      const fine = await createHttpClient(new URL(`http://127.0.0.1:${port}/v1`), { timeoutMs: 10_000 });
      assert.equal((await fine.send("GET", "/orders", {})).response?.status, 200);
      fine.close();
      assert.equal(reached, 1);
    } finally {
      client.close();
      server.close();
    }
  });

  it("reads every Content-Type line of an answer, joined, where node:http keeps the first only", async () => {
    const server = createServer((_request, response) => {
      response.setHeader("content-type", ["application/json", "text/html"]);
      response.setHeader("retry-after", ["5", "7"]);
      response.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = await createHttpClient(new URL(`http://127.0.0.1:${port}/v1`), { timeoutMs: 10_000 });
    try {
      const { response } = await client.send("GET", "/orders", {});
      assert.equal(response?.headers["content-type"], "application/json, text/html");
      assert.equal(response?.headers["retry-after"], "5");
    } finally {
      client.close();
      server.close();
    }
  });

  it("waits out a 429 and sends again, counting each; a fresh request is sent once, never retried", async () => {
    let answered = 0;
    const server = createServer((_request, response) => {
      answered++;
      response.writeHead(answered % 3 === 0 ? 200 : 429, { "retry-after": "0" }).end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = await createHttpClient(new URL(`http://127.0.0.1:${port}/v1`), {
      timeoutMs: 10_000,
      retry: { max: 5, maxWaitMs: 0 },
    });
    try {
      const retried = await client.send("GET", "/orders", {});
      assert.equal(retried.response?.status, 200);
      assert.equal(retried.retries, 2);
      assert.deepEqual([client.count, client.retries], [3, 2]);
      const fresh = await client.send("GET", "/orders", {}, { fresh: true });
      assert.equal(fresh.response?.status, 429);
      assert.deepEqual([client.count, client.retries, answered], [4, 2, 4]);
    } finally {
      client.close();
      server.close();
    }
  });

  it("does not reuse a kept-alive connection that received bytes while idle (a server's unasked answer)", async () => {
    const connections: Socket[] = [];
    let unaskedWritten: Promise<void> = Promise.resolve();
    const server = createTcpServer((socket) => {
      socket.setNoDelay(true);
      connections.push(socket);
      socket.on("error", () => {});
      socket.on("data", (request) => {
        socket.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]");
        if (!String(request).includes("twice")) return;
        // The second answer after the first, once that one was read: an answer no request asked for.
        const unasked = '[{"id":666}]';
        unaskedWritten = new Promise((resolve) =>
          setImmediate(() =>
            socket.write(
              `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${unasked.length}\r\n\r\n${unasked}`,
              () => resolve(),
            ),
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = await createHttpClient(new URL(`http://127.0.0.1:${port}/v1`), { timeoutMs: 10_000 });
    try {
      const first = await client.send("GET", "/orders?twice", {});
      assert.equal(first.response?.body, "[]");
      await unaskedWritten;
      // On loopback the bytes are in the client's socket once written: a turn or two of the loop reads them.
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      const next = await client.send("GET", "/orders", {});
      assert.equal(next.response?.body, "[]");
      assert.equal(
        connections.length,
        2,
        "the next request went out on the connection that had the unasked bytes",
      );
    } finally {
      client.close();
      for (const socket of connections) socket.destroy();
      server.close();
    }
  });
});
