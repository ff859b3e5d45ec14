import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { startSourceProxy } from "../../test-support/proxy-process.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-informational-");
const LIST = '[{"id":1,"petId":2,"quantity":1,"shipDate":"2026-01-01T00:00:00Z","complete":false}]';
const EARLY_HINTS = "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n";

/** An upstream that sends `heads` 103 heads before each answer, written as the bytes HTTP carries. */
async function hintingUpstream(heads: number) {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.once("data", () => {
      socket.write(EARLY_HINTS.repeat(heads));
      socket.end(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${LIST.length}\r\nconnection: close\r\n\r\n${LIST}`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function throughProxy(heads: number, name: string) {
  const upstream = await hintingUpstream(heads);
  const json = join(folder, `${name}.json`);
  const proxy = await startSourceProxy(["--upstream", upstream.url, "--reporter", `json:${json}`]);
  try {
    const answer = await fetch(`${proxy.url}/store/orders`, { headers: { authorization: "Bearer k" } });
    const body = await answer.text();
    return { status: answer.status, body, json };
  } finally {
    await upstream.close();
    await proxy.stop("SIGTERM");
  }
}

describe("informational (1xx) heads from the upstream", () => {
  it("a few before the answer are read past: the client gets the answer, judged", async () => {
    const { status, body, json } = await throughProxy(3, "few");
    assert.deepEqual([status, body], [200, LIST]);
    const report = JSON.parse(readFileSync(json, "utf8")) as Report;
    assert.equal(report.traffic?.judged, 1);
  });

  it("a stream of them is no answer: a 502 at the bound, said, never read to its end", async () => {
    const { status, json } = await throughProxy(100_000, "storm");
    assert.equal(status, 502);
    const report = JSON.parse(readFileSync(json, "utf8")) as Report;
    assert.match(
      JSON.stringify(report),
      /an answer HTTP cannot carry: more than 100 informational \(1xx\) heads before its answer/,
    );
  });
});
