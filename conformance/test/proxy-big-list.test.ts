import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { startTarget, TARGET_KEY } from "../../test-support/target-server.ts";
import type { JudgedExchange } from "../proxy/judged-exchange.ts";
import { runProxy } from "../proxy/run-proxy.ts";
import type { Report } from "../reports/report.ts";
import { json, startScriptedUpstream } from "./scripted-upstream.ts";

/** GETs a path through the proxy and counts the bytes that come back, without keeping them. */
function fetchBytes(url: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers: { authorization: `Bearer ${TARGET_KEY}` } }, (response) => {
      let bytes = 0;
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, bytes }));
      response.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

// The verdict on a large list comes after the client's last byte, as late as the machine's load makes it:
// these tests read verdicts, so the stop waits for them rather than cutting them off after its grace.
const JUDGED_WHOLE = { graceMs: 120_000 };

async function throughProxy(
  upstream: string,
  maxBodyBytes: number | undefined,
  use: (base: string) => Promise<void>,
  judgeOnWorker = true,
): Promise<{ report: Report; seen: JudgedExchange[] }> {
  const seen: JudgedExchange[] = [];
  const proxy = await runProxy({
    upstream,
    port: 0,
    env: {},
    judgeOnWorker,
    ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}),
    onExchange: (judged) => seen.push(judged),
  });
  try {
    await use(proxy.url);
  } catch (error) {
    await proxy.close(JUDGED_WHOLE);
    throw error;
  }
  return { report: await proxy.close(JUDGED_WHOLE), seen };
}

describe("the validating proxy with lists of any size", () => {
  for (const judgeOnWorker of [true, false])
    test(`a million-order list passes through whole and is judged order by order as it streams, ${judgeOnWorker ? "on the judges' worker thread" : "in turns on the proxy's own thread"}`, async () => {
      const target = await startTarget({ bulkOrders: 1_000_000 });
      try {
        const direct = await fetchBytes(`${target.url}/store/orders`);
        const { report, seen } = await throughProxy(
          target.url,
          undefined,
          async (base) => {
            const [list, small] = await Promise.all([
              fetchBytes(`${base}/store/orders`),
              fetchBytes(`${base}/store/orders/1000000000`),
            ]);
            assert.equal(list.status, 200);
            assert.equal(list.bytes, direct.bytes, "every byte forwarded");
            assert.equal(small.status, 404);
          },
          judgeOnWorker,
        );
        const list = seen.find((judged) => judged.pathname === "/v1/store/orders");
        assert.deepEqual(
          list?.checks.map((check) => `${check.id} ${check.status} ${check.message}`),
          [
            "listOrders.status passed 200 as expected",
            "listOrders.content-type passed JSON Content-Type (application/json)",
            "listOrders.body passed an array of 1000003 Order records",
            "listOrders.unique-ids passed 1000003 distinct ids",
            "listOrders.no-status-field passed no Order exposes a status",
          ],
        );
        // Kept for the state rules as the judge read it: compared with the next list, however large.
        assert.deepEqual(
          report.warnings.filter((warning) => warning.includes("not compared")),
          [],
        );
        assert.equal(report.scenarios.find((scenario) => scenario.id === "state")?.status, "skipped");
      } finally {
        await target.close();
      }
    });

  test("a gzip list is decoded as it streams; a bomb past --max-body passes through unchanged, not judged", async () => {
    const orders = Array.from(
      { length: 200_000 },
      (_, index) => `{"id":${index + 1},"quantity":${index % 4}}`,
    );
    const list = gzipSync(`[${orders.join(",")}]`);
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    const upstream = await startScriptedUpstream((request) =>
      request.url.endsWith("bomb")
        ? {
            status: 200,
            headers: [
              ["Content-Encoding", "gzip"],
              ["Content-Type", "application/json"],
            ],
            body: bomb,
          }
        : request.url === "/v1/store/orders"
          ? {
              status: 200,
              headers: [
                ["Content-Encoding", "gzip"],
                ["Content-Type", "application/json"],
              ],
              body: list,
            }
          : json(404, '{"code":"not_found","message":"no","status":404}'),
    );
    try {
      const { report, seen } = await throughProxy(upstream.url, 16 * 1024 * 1024, async (base) => {
        assert.equal((await fetchBytes(`${base}/store/orders`)).bytes, list.length);
        // The bomb rides on the list's URL, as a hostile upstream would send it.
        const bombed = await fetchBytes(`${base}/store/orders?bomb`);
        assert.equal(bombed.bytes, bomb.length, "forwarded unchanged");
      });
      // In the order the requests came: a list's verdict may come after a later exchange's.
      const [first, second] = [...seen].sort((a, b) => a.ref.seq - b.ref.seq);
      assert.equal(
        first?.checks.find((check) => check.id === "listOrders.body")?.message,
        "an array of 200000 Order records",
      );
      assert.equal(second?.operation, undefined);
      assert.equal(
        second?.notJudged,
        "the body is larger than the 16 MiB maxBodyBytes allows: forwarded unchanged, not judged",
      );
      assert.ok(report.warnings.some((warning) => warning.includes("16 MiB maxBodyBytes")));
    } finally {
      await upstream.close();
    }
  });

  test("two lists of over a mebibyte that differ only past their first mebibyte are compared in full", async () => {
    const orders = Array.from(
      { length: 40_000 },
      (_, index) => `{"id":${index + 1},"petId":${index},"quantity":1}`,
    );
    // The second list lacks the last order, and order 5, cancelled in between, has another quantity.
    const changed = orders
      .slice(0, -1)
      .map((order) => (order.startsWith('{"id":5,') ? order.replace('"quantity":1', '"quantity":2') : order));
    const lists = [`[${orders.join(",")}]`, `[${changed.join(",")}]`];
    assert.ok((lists[1]?.length ?? 0) > 1024 * 1024);
    let served = 0;
    // The proxy's own probe at start carries no key; the two lists go to the authenticated requests.
    const upstream = await startScriptedUpstream((request) =>
      request.method === "DELETE"
        ? { status: 204 }
        : request.rawHeaders.some((header) => header.toLowerCase() === "authorization")
          ? json(200, lists[Math.min(served++, 1)] as string)
          : json(401, '{"code":"unauthorized","message":"no key","status":401}'),
    );
    try {
      const { seen } = await throughProxy(upstream.url, undefined, async (base) => {
        await fetchBytes(`${base}/store/orders`);
        await new Promise<void>((resolve, reject) =>
          httpRequest(
            `${base}/store/orders/5`,
            { method: "DELETE", headers: { authorization: `Bearer ${TARGET_KEY}` } },
            (response) => {
              response.resume().on("end", resolve);
            },
          )
            .on("error", reject)
            .end(),
        );
        await fetchBytes(`${base}/store/orders`);
      });
      const [changed, ...rest] = seen.flatMap((judged) => judged.findings.map((finding) => finding.message));
      // The changed record as the model found it in order 5's live history.
      assert.match(
        changed ?? "",
        /^order 5 changed when it was cancelled: #1 GET \/v1\/store\/orders → 200, listing it \([\d.]+–[\d.]+ ms\), .*#3 GET \/v1\/store\/orders → 200, listing it \([\d.]+–[\d.]+ ms\)$/,
      );
      assert.deepEqual(rest, [
        "order 40000, listed by #1 GET /v1/store/orders → 200, is missing from #3 GET /v1/store/orders → 200, and no cancel of it went through the proxy in between",
      ]);
    } finally {
      await upstream.close();
    }
  });
});
