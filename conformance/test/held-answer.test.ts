import assert from "node:assert/strict";
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { startSourceProxy } from "../../test-support/proxy-process.ts";

const order = (id: number) =>
  `{"id":${id},"petId":1,"quantity":1,"shipDate":"2026-11-02T10:00:00Z","complete":false}`;

/** Valid lists of `n` orders, written in 64 KiB pieces, chunked or with a Content-Length. */
async function listUpstream() {
  const server = createServer(async (incoming, response) => {
    incoming.resume();
    const url = new URL(incoming.url ?? "/", "http://upstream");
    const n = Number(url.searchParams.get("n") ?? 1);
    const body = Buffer.from(`[${Array.from({ length: n }, (_, at) => order(at + 1)).join(",")}]`);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (url.searchParams.get("chunked") !== "1") headers["content-length"] = String(body.length);
    response.writeHead(200, headers);
    for (let at = 0; at < body.length; at += 65536)
      if (!response.write(body.subarray(at, at + 65536)))
        await new Promise((resolve) => response.once("drain", resolve));
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** A list through the proxy, read to its end: its status and length, or how it broke off. */
function readList(proxyUrl: string, query: string, agent: Agent) {
  return new Promise<{ status: number; bytes: number } | { broken: string }>((resolve) => {
    const outgoing = request(
      `${proxyUrl}/store/orders?${query}`,
      { agent, headers: { authorization: "Bearer some-key" } },
      (response) => {
        let bytes = 0;
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, bytes }));
        response.on("error", (error) => resolve({ broken: error.message }));
      },
    );
    outgoing.on("error", (error) => resolve({ broken: error.message }));
    outgoing.end();
  });
}

describe("held answers (--errors) at a small budget", () => {
  it("every list held, let go of for room or judged in part, reaches its client whole and ended", async () => {
    const upstream = await listUpstream();
    // A deadline well past a list's own time: an answer whose end never comes is cut there, and fails.
    const proxy = await startSourceProxy([
      "--upstream",
      upstream.url,
      "--errors",
      "--max-memory",
      "16MiB",
      "--deadline",
      "20s",
    ]);
    const agent = new Agent({ keepAlive: true });
    try {
      const lists = await Promise.all(
        Array.from({ length: 12 }, (_, at) =>
          readList(proxy.url, `n=${30_000 + at}&chunked=${(at + 1) % 2}`, agent),
        ),
      );
      lists.forEach((list, at) => {
        const expected = `[${Array.from({ length: 30_000 + at }, (_, index) => order(index + 1)).join(",")}]`;
        assert.deepEqual(list, { status: 200, bytes: expected.length }, `list ${at}`);
      });
    } finally {
      agent.destroy();
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
  });
});
