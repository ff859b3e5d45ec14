import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { startSourceProxy } from "../../test-support/proxy-process.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("proxy-client-left-");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An upstream that answers a list only when told to, so that its client can leave before it does. */
async function slowUpstream() {
  const waiting: Array<() => void> = [];
  let asked = 0;
  let left = 0;
  const server = createServer((incoming, response) => {
    incoming.resume();
    asked++;
    const answer = () => {
      if (response.destroyed) return;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify([{ id: 1, petId: 2, quantity: 1, complete: false }]));
    };
    // The proxy's probe at its start is answered at once; the client's list waits.
    if (asked === 1) answer();
    else {
      waiting.push(answer);
      response.on("close", () => {
        if (!response.writableFinished) left++;
      });
    }
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    waiting: () => waiting.length,
    /** Requests whose connection the proxy closed before they were answered. */
    left: () => left,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe("a client that leaves before its answer", () => {
  it("is reported as the client's doing, never as an upstream failure", async () => {
    const upstream = await slowUpstream();
    const reportFile = join(folder, "report.json");
    const proxy = await startSourceProxy(["--upstream", upstream.url, "--reporter", `json:${reportFile}`]);
    try {
      const target = new URL(`${proxy.url}/store/orders`);
      const client = request(target, { headers: { authorization: "Bearer some-key" } });
      client.on("error", () => {});
      client.end();
      // The request reached the upstream through the proxy; then its client goes.
      while (upstream.waiting() === 0) await sleep(20);
      client.destroy();
      // The proxy passes the client's leaving on: the upstream's request is closed unanswered.
      while (upstream.left() === 0) await sleep(20);
    } finally {
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
    assert.equal(report.traffic?.upstreamFailures, 0, JSON.stringify(report.warnings));
    assert.ok(
      report.warnings.some((warning) => /the client closed its connection/.test(warning)),
      JSON.stringify(report.warnings),
    );
  });
});
