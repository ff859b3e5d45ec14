import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { residentMemory } from "../../test-support/process-memory.ts";
import { listBytesThrough, NO_PROXY_ENV, startProxyProcess } from "../../test-support/proxy-process.ts";
import { TARGET_KEY } from "../../test-support/target-server.ts";

const LISTS = 16;
const ORDERS = 2_000_000;
// The command as users run it: under tsx the sources start larger, and the judges' thread compiles its own.
const BUILT_BIN = new URL("../../dist/bin/petstore-conformance.js", import.meta.url).pathname;

/** Lists of `{"id":N}` orders, each list's ids its own, written as fast as the proxy takes them. */
async function smallOrdersUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((incoming, response: ServerResponse) => {
    response.writeHead(200, { "content-type": "application/json" });
    const first = Number(incoming.headers["x-list"] ?? 0) * 10_000_000;
    let id = 0;
    const pump = () => {
      while (id < ORDERS) {
        let text = "";
        for (let piece = 0; piece < 5000 && id < ORDERS; piece++, id++)
          text += `${id === 0 ? "[" : ","}{"id":${first + id}}`;
        if (!response.write(text)) {
          response.once("drain", pump);
          return;
        }
      }
      response.end("]");
    };
    pump();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describe("the proxy's peak memory under many lists at once", () => {
  it("sixteen lists of 2,000,000 small orders at 64MiB: peak within the budget + 100 MiB", async () => {
    assert.ok(existsSync(BUILT_BIN), `${BUILT_BIN} is missing: run npx tsup first`);
    const upstream = await smallOrdersUpstream();
    const env = { ...process.env, NO_COLOR: "", ...NO_PROXY_ENV };
    const proxy = await startProxyProcess(
      process.execPath,
      [BUILT_BIN, "proxy", "--port", "0", "--upstream", upstream.url, "--max-memory", "64MiB"],
      { env },
    );
    try {
      const read = await Promise.all(
        Array.from({ length: LISTS }, (_, list) =>
          listBytesThrough(proxy.url, { authorization: `Bearer ${TARGET_KEY}`, "x-list": String(list) }),
        ),
      );
      assert.ok(
        read.every((bytes) => bytes > ORDERS * 8),
        "every list reaches its client whole",
      );
      assert.equal(proxy.child.exitCode, null, "the proxy is alive");
      const peak = residentMemory(proxy.child.pid).peak / (1024 * 1024);
      if (process.env.PEAK_MEMORY_VERBOSE) process.stderr.write(`peak ${Math.round(peak)} MiB\n`);
      assert.ok(peak <= 64 + 100, `peak RSS ${Math.round(peak)} MiB`);
    } finally {
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
  });
});
