import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Exchange } from "../../conformance/judging/exchange.ts";
import { runConformance } from "../../conformance/suite/runner.ts";
import { type PeerProcess, startPrismProxy } from "../../scripts/peers.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { startTarget, TARGET_KEY } from "../../test-support/target-server.ts";
import { safeIdFixture } from "./oracle-fixtures.ts";
import { DEV_KEY } from "./support.ts";

const PROBLEM = "application/problem+json";

interface Violation {
  location: string[];
  code: string | number;
  message: string;
}

/** What Prism reported about one exchange in its sl-violations header. */
function parseViolations(exchange: Exchange): Violation[] {
  const header = exchange.response?.headers["sl-violations"];
  return header ? (JSON.parse(header) as Violation[]) : [];
}

/** The suite's deliberately invalid requests: bad credentials, and order ids that are not int64. */
function invalidOnPurpose(exchange: Exchange): boolean {
  const authorization = exchange.request.headers.authorization ?? "";
  const id = exchange.request.path.split("/")[3];
  const int64 =
    id === undefined || (/^-?\d+$/.test(id) && BigInt(id) < 2n ** 63n && BigInt(id) >= -(2n ** 63n));
  return !/^Bearer \S/.test(authorization) || !int64;
}

async function withMockBehindPrism<T>(
  mockArgs: string[],
  proxyOptions: { errors?: boolean; validateRequest?: boolean },
  use: (proxy: PeerProcess) => Promise<T>,
): Promise<T> {
  const mock: MockProcess = await startMockProcess(["--quiet", ...mockArgs]);
  const proxy = await startPrismProxy(mock.url, proxyOptions).catch(async (error) => {
    await mock.stop();
    throw error;
  });
  try {
    return await use(proxy);
  } finally {
    await Promise.all([proxy.stop(), mock.stop()]);
  }
}

describe("Prism's validating proxy as an independent judge of the mock", () => {
  it("passes every response of a full conformance run, and objects only to the requests made invalid on purpose", async () => {
    // Without --errors Prism forwards everything and reports each violation in an sl-violations header.
    await withMockBehindPrism(["--fixtures", safeIdFixture()], {}, async (proxy) => {
      const exchanges: Exchange[] = [];
      // Prism routes by openapi.yaml's paths, so clients use its bare address; it forwards to <mock>/v1.
      const report = await runConformance({
        baseUrl: proxy.url,
        apiKey: DEV_KEY,
        pendingOrderId: "2",
        shippedOrderId: "1",
        // The race judges the mock under concurrency, not Prism's reading of the contract.
        skip: ["cancel-race"],
        onExchange: (exchange) => exchanges.push(exchange),
      });
      // Four readings of the list (the first also the list-orders step's answer) and 27 other requests.
      assert.equal(exchanges.length, 31);
      const failed = report.scenarios.flatMap((s) => s.checks.filter((c) => c.status === "failed"));
      assert.deepEqual(failed, []);
      assert.equal(report.summary.skipped, 1, "the race, skipped on purpose");

      const violations = exchanges.map((exchange) => ({ exchange, found: parseViolations(exchange) }));
      assert.deepEqual(
        violations.flatMap(({ found }) => found.filter((v) => v.location[0] !== "request")),
        [],
        "no response violates openapi.yaml",
      );
      for (const { exchange, found } of violations) {
        assert.equal(
          found.length > 0,
          invalidOnPurpose(exchange),
          `Prism's verdict on ${JSON.stringify(exchange.request)}`,
        );
      }
    });
  });

  it("with --errors, answers no request with a 500 VIOLATIONS and refuses only requests made invalid on purpose", async () => {
    await withMockBehindPrism(["--fixtures", safeIdFixture()], { errors: true }, async (proxy) => {
      const exchanges: Exchange[] = [];
      await runConformance({
        baseUrl: proxy.url,
        apiKey: DEV_KEY,
        pendingOrderId: "2",
        shippedOrderId: "1",
        skip: ["cancel-race"],
        onExchange: (exchange) => exchanges.push(exchange),
      });
      assert.deepEqual(
        exchanges.filter((e) => e.response?.status === 500).map((e) => e.response?.body),
        [],
      );
      for (const exchange of exchanges) {
        const refusedByPrism = exchange.response?.headers["content-type"]?.startsWith(PROBLEM) === true;
        assert.equal(
          refusedByPrism,
          invalidOnPurpose(exchange),
          `Prism's answer to ${JSON.stringify(exchange.request)}`,
        );
      }
    });
  });

  it("does catch a response that breaks the schema (pointed at a broken server)", async () => {
    const broken = await startTarget({ quantityAsString: true, errorWithoutMessage: true });
    const proxy = await startPrismProxy(broken.url, { errors: true });
    try {
      const list = await fetch(`${proxy.url}/store/orders`, {
        headers: { authorization: `Bearer ${TARGET_KEY}` },
      });
      assert.equal(list.status, 500);
      assert.match(await list.text(), /VIOLATIONS/);
      assert.match(list.headers.get("sl-violations") ?? "", /quantity/);
      const notFound = await fetch(`${proxy.url}/store/orders/424242`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${TARGET_KEY}` },
      });
      assert.equal(notFound.status, 500);
      assert.match(notFound.headers.get("sl-violations") ?? "", /message/);
    } finally {
      await proxy.stop();
      await broken.close();
    }
  });

  it("flags the bundled ids above 2^53, and nothing else: a limit of Prism, not of the contract", async () => {
    await withMockBehindPrism([], {}, async (proxy) => {
      const list = await fetch(`${proxy.url}/store/orders`, {
        headers: { authorization: `Bearer ${DEV_KEY}` },
      });
      assert.equal(list.status, 200);
      const violations = JSON.parse(list.headers.get("sl-violations") ?? "[]") as Array<{
        location: string[];
        code: string;
      }>;
      assert.deepEqual(
        violations.map((v) => `${v.location.slice(2).join(".")} ${v.code}`),
        ["10.id maximum", "10.petId maximum", "11.id maximum"],
      );
    });
  });
});
