import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { getResponse } from "msw";
import { setupServer } from "msw/node";
import { runConformance } from "../../conformance/suite/runner.ts";
import { petstoreHandlers } from "../adapters/msw.ts";
import { webHandler } from "../core/web.ts";
import { createPetstoreMock } from "../in-process.ts";
import { BUNDLED_FIXTURES } from "../options.ts";
import { caseApi } from "./control-cases.ts";
import { SHARED_CASES } from "./shared-cases.ts";
import { DEV_KEY } from "./support.ts";
import { httpTransport, type Transport } from "./transports.ts";

const FIXTURE_TEXT = readFileSync(BUNDLED_FIXTURES, "utf8");
const CORE_ENTRY = fileURLToPath(new URL("../core/petstore-mock.ts", import.meta.url));

/** The Web-standard handler, called with Request objects as MSW, Service Workers and routes do. */
function webTransport(handle: (request: Request) => Promise<Response>, origin: string): Transport {
  return httpTransport(origin, ((url: string, init?: RequestInit) =>
    handle(new Request(url, init))) as typeof fetch);
}

describe("the core has no Node in it", () => {
  it("bundles for the browser with no Node built-in and no Buffer", async () => {
    const result = await build({
      entryPoints: [CORE_ENTRY],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent",
    });
    const code = result.outputFiles[0]?.text ?? "";
    assert.ok(code.length > 10_000);
    assert.doesNotMatch(code, /\bBuffer\.|require\(["']node:|from ["']node:/);
  });
});

describe("the shared table through the Web-standard handler (createPetstoreMock().handle)", () => {
  const mock = createPetstoreMock({ fixtures: FIXTURE_TEXT });
  const transport = webTransport(mock.handle, "http://petstore.test");
  for (const [index, testCase] of SHARED_CASES.entries()) {
    it(testCase.name, () => testCase.run(caseApi(transport, `web-${index}`)));
  }
});

describe("Mock Service Worker in Node (msw/node)", () => {
  const mock = createPetstoreMock({ fixtures: FIXTURE_TEXT });
  const server = setupServer(...petstoreHandlers(mock, { baseUrl: "http://petstore.test/v1" }));
  before(() => server.listen({ onUnhandledRequest: "error" }));
  after(() => server.close());

  describe("the shared table through fetch, intercepted", () => {
    const transport = httpTransport("http://petstore.test");
    for (const [index, testCase] of SHARED_CASES.entries()) {
      it(testCase.name, () => testCase.run(caseApi(transport, `msw-${index}`)));
    }
  });

  it("passes the conformance suite, unchanged, every scenario, through Node's HTTP client", async () => {
    const report = await runConformance({
      baseUrl: "http://petstore.test/v1",
      apiKey: DEV_KEY,
      pendingOrderId: "9007199254740993",
      shippedOrderId: "9223372036854775807",
      raceOrderId: "3",
      env: {},
    });
    assert.deepEqual(
      report.scenarios.flatMap((s) => s.checks.filter((c) => c.status !== "passed").map((c) => c.id)),
      [],
    );
    assert.equal(report.summary.skipped, 0);
    assert.equal(report.summary.failed, 0);
  });

  it("works from the control functions of the same mock, ids exact", async () => {
    const pending = await mock.control.session("functions").setStatus("9223372036854775807", "pending");
    assert.equal(pending.status, "pending");
    const response = await fetch("http://petstore.test/v1/store/orders/9223372036854775807", {
      method: "DELETE",
      headers: { authorization: `Bearer ${DEV_KEY}`, "x-mock-session": "functions" },
    });
    assert.equal(response.status, 204);
    const orders = await mock.control.session("functions").orders();
    assert.equal(orders.find((order) => order.id === "9223372036854775807")?.status, "cancelled");
    await mock.control.session("functions").reset();
  });
});

describe("a mock mounted under a path", () => {
  it("takes the path off first, for MSW and the Web handler alike", async () => {
    const mock = createPetstoreMock({ fixtures: FIXTURE_TEXT });
    const handle = webHandler(mock.core, "/petstore");
    const listed = await handle(
      new Request("http://example.test/petstore/v1/store/orders", {
        headers: { authorization: `Bearer ${DEV_KEY}` },
      }),
    );
    assert.equal(listed.status, 200);
    const handlers = petstoreHandlers(mock, { baseUrl: "http://example.test/petstore/v1" });
    const viaMsw = await getResponse(
      handlers,
      new Request("http://example.test/petstore/v1/store/orders/2", {
        method: "DELETE",
        headers: { authorization: `Bearer ${DEV_KEY}` },
      }),
    );
    assert.equal(viaMsw?.status, 204);
    const elsewhere = await getResponse(handlers, new Request("http://example.test/other/v1/store/orders"));
    assert.equal(elsewhere, undefined, "requests outside the mount are not answered");
  });

  it("accepts parsed fixtures and keys of its own, and refuses fixtures without a key", () => {
    const parsed = { orders: [{ id: 1, status: "pending" }] };
    assert.ok(createPetstoreMock({ fixtures: parsed, apiKeys: ["k"] }));
    assert.throws(() => createPetstoreMock({ fixtures: parsed }), /needs an API key/);
    assert.throws(() => createPetstoreMock({ fixtures: "{" }), /fixtures: not valid JSON/);
  });
});
