import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { startSourceProxy } from "../../test-support/proxy-process.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-not-modified-");
const ETAG = '"v1"';
const LIST = '[{"id":1,"petId":7,"quantity":1,"shipDate":"2026-01-01T00:00:00.000Z","complete":false}]';

/**
 * An upstream with validators, as Express's defaults make one: a list whose ETag or Last-Modified the
 * request names is answered 304; with `always304`, every list is, asked or not (the client's, not
 * the proxy's start-up look at the base address, which a 304 would stop).
 */
async function startCachingUpstream(always304 = false) {
  const server = createServer((request, response) => {
    const asked =
      request.headers["if-none-match"] === ETAG || request.headers["if-modified-since"] !== undefined;
    const list = request.headers.authorization !== undefined;
    if (list && (asked || always304)) return response.writeHead(304, { etag: ETAG }).end();
    response.writeHead(200, { "content-type": "application/json", etag: ETAG }).end(LIST);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The proxy's exit code and report after these requests for the list, each with its own headers. */
async function throughProxy(name: string, upstream: { url: string }, requests: Record<string, string>[]) {
  const json = join(folder, `${name}.json`);
  const proxy = await startSourceProxy([
    "--upstream",
    upstream.url,
    "--fail-on-violation",
    "--reporter",
    `json:${json}`,
  ]);
  const statuses: number[] = [];
  let code: number | null = null;
  try {
    for (const headers of requests) {
      const answer = await fetch(`${proxy.url}/store/orders`, {
        headers: { authorization: "Bearer some-key", ...headers },
      });
      await answer.arrayBuffer();
      statuses.push(answer.status);
    }
  } finally {
    ({ code } = await proxy.stop("SIGTERM"));
  }
  return { code, statuses, report: JSON.parse(readFileSync(json, "utf8")) as Report };
}

const failed = (report: Report) =>
  report.scenarios.flatMap((scenario) => scenario.checks).filter((check) => check.status === "failed");

describe("a 304 Not Modified through the proxy", () => {
  it("is not judged when the request was conditional (If-None-Match, If-Modified-Since): the gate passes", async () => {
    const upstream = await startCachingUpstream();
    try {
      const { code, statuses, report } = await throughProxy("conditional", upstream, [
        {},
        { "if-none-match": ETAG },
        { "if-modified-since": "Thu, 01 Jan 2026 00:00:00 GMT" },
        {},
      ]);
      assert.deepEqual(statuses, [200, 304, 304, 200]);
      assert.deepEqual(failed(report), []);
      assert.match(
        report.warnings.join("\n"),
        /2 requests were forwarded without being judged \(a 304 to a conditional request: the client reads its cached copy\)/,
      );
      assert.equal(report.traffic?.judged, 2, "the two lists, and nothing of the 304s");
      assert.equal(code, 0);
    } finally {
      await upstream.close();
    }
  });

  it("fails when the request asked for none: a 304 then is the upstream's own", async () => {
    const upstream = await startCachingUpstream(true);
    try {
      const { code, statuses, report } = await throughProxy("unasked", upstream, [{}]);
      assert.deepEqual(statuses, [304]);
      assert.match(JSON.stringify(failed(report)), /listOrders\.status.*got 304/);
      assert.equal(code, 1);
    } finally {
      await upstream.close();
    }
  });
});
