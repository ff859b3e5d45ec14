import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { type CrossOriginScene, chromiumSkip, startCrossOriginScene } from "../../test-support/chromium.ts";
import type { MockProcess } from "../../test-support/spawn-mock.ts";
import { type RunningProxy, runProxy } from "../proxy/run-proxy.ts";
import { MOCK_KEY, MOCK_PENDING_ID } from "./mock-ids.ts";
import { startScriptedUpstream } from "./scripted-upstream.ts";

describe("a browser app on another origin calling the proxy", { skip: chromiumSkip }, () => {
  let scene: CrossOriginScene;
  let mock: MockProcess;
  let page: CrossOriginScene["page"];
  let browser: Browser;

  before(async () => {
    scene = await startCrossOriginScene();
    ({ mock, page, browser } = scene);
  });
  after(() => scene?.close());

  const fromPage = async (proxy: RunningProxy, session: string) => {
    const tab = await browser.newPage();
    await tab.goto(page.url);
    const result = await tab.evaluate(
      async ({ base, key, id, session }) => {
        const headers = { Authorization: `Bearer ${key}`, "X-Mock-Session": session };
        const list = await fetch(`${base}/store/orders`, { headers });
        const text = await list.text();
        const cancel = await fetch(`${base}/store/orders/${id}`, { method: "DELETE", headers });
        const again = await fetch(`${base}/store/orders/${id}`, { method: "DELETE", headers });
        return {
          list: list.status,
          text,
          cancel: cancel.status,
          again: again.status,
          againBody: await again.text(),
        };
      },
      { base: proxy.url, key: MOCK_KEY, id: MOCK_PENDING_ID, session },
    );
    await tab.close();
    return result;
  };

  /** A simple GET from the page on the other origin: what it could read, or how the browser refused it. */
  const readFromPage = async (proxy: RunningProxy) => {
    const tab = await browser.newPage();
    await tab.goto(page.url);
    const outcome = await tab.evaluate(async (base) => {
      try {
        const answer = await fetch(`${base}/store/orders`);
        return `read ${answer.status}: ${await answer.text()}`;
      } catch (error) {
        return `refused: ${(error as Error).name}`;
      }
    }, proxy.url);
    await tab.close();
    return outcome;
  };

  it("lists and cancels through the proxy; the preflights pass through unjudged and nothing fails", async () => {
    const proxy = await runProxy({ upstream: mock.url, port: 0, env: {} });
    let report: Awaited<ReturnType<RunningProxy["close"]>>;
    try {
      const result = await fromPage(proxy, "browser-through-proxy");
      assert.equal(result.list, 200);
      assert.match(result.text, /"id":9007199254740993/, "the id reaches the page exactly");
      assert.equal(result.cancel, 204);
      assert.equal(result.again, 409);
      assert.match(result.againBody, /"status":409/);
    } finally {
      report = await proxy.close();
    }
    assert.equal(report.summary.failed, 0);
    assert.equal(report.traffic?.judged, 3);
    assert.ok((report.traffic?.notJudged ?? 0) >= 1, "the CORS preflights went through, not judged");
    assert.match(report.warnings.join("\n"), /CORS preflight/);
  });

  it("with --errors the page can read the proxy's own 502 naming the violation", async () => {
    // An upstream that answers preflights, and lists orders that expose their status.
    const cors: Array<[string, string]> = [["Access-Control-Allow-Origin", "*"]];
    const broken = await startScriptedUpstream((got) =>
      got.method === "OPTIONS"
        ? { status: 204, headers: [...cors, ["Access-Control-Allow-Headers", "Authorization"]] }
        : {
            status: 200,
            headers: [...cors, ["Content-Type", "application/json"]],
            body: '[{"id":1,"status":"pending"}]',
          },
    );
    const proxy = await runProxy({ upstream: broken.url, port: 0, env: {}, errors: true });
    try {
      const tab = await browser.newPage();
      await tab.goto(page.url);
      const result = await tab.evaluate(async (base) => {
        const list = await fetch(`${base}/store/orders`, {
          headers: { Authorization: "Bearer target-key-42" },
        });
        return { status: list.status, body: await list.json() };
      }, proxy.url);
      await tab.close();
      assert.equal(result.status, 502);
      assert.equal(result.body.code, "contract_violation");
      assert.match(result.body.message, /listOrders\.no-status-field/);
    } finally {
      await proxy.close();
      await broken.close();
    }
  });

  it("grants a page no more than the upstream did: without the upstream's CORS, the proxy's own 502 is unreadable", async () => {
    // An upstream for same-origin clients only: simple GETs, answered without any CORS header.
    const sameOrigin = await startScriptedUpstream(() => ({
      status: 200,
      headers: [["Content-Type", "application/json"]],
      body: '[{"id":1,"status":"pending"}]',
    }));
    const proxy = await runProxy({ upstream: sameOrigin.url, port: 0, env: {}, errors: true });
    try {
      const outcome = await readFromPage(proxy);
      assert.equal(
        outcome,
        "refused: TypeError",
        "the browser keeps the proxy's answer from the other origin",
      );
      assert.ok(
        sameOrigin.received.some((got) => got.method === "GET"),
        "the request was sent and judged",
      );
    } finally {
      const report = await proxy.close();
      await sameOrigin.close();
      assert.equal(report.traffic?.replaced, 1);
    }
  });

  it("does not lend its --header credential to a page of another origin, unless --cors-origin names it", async () => {
    // A gateway that answers any origin with a grant, and lists orders only for the gateway key.
    const gateway = await startScriptedUpstream((request) => {
      const keyed = request.rawHeaders.some(
        (value, index) =>
          index % 2 === 0 &&
          value.toLowerCase() === "x-gateway-key" &&
          request.rawHeaders[index + 1] === "gw-secret-1",
      );
      return {
        status: keyed ? 200 : 403,
        headers: [
          ["Content-Type", "application/json"],
          ["Access-Control-Allow-Origin", "*"],
        ],
        body: keyed ? '[{"id":7}]' : '{"code":"forbidden","message":"no key","status":403}',
      };
    });
    const headers = { "X-Gateway-Key": "gw-secret-1" };
    try {
      const lending = await runProxy({ upstream: gateway.url, port: 0, env: {}, headers });
      try {
        assert.equal(
          await readFromPage(lending),
          "refused: TypeError",
          "the page reads nothing the key unlocked",
        );
      } finally {
        await lending.close();
      }
      const named = await runProxy({
        upstream: gateway.url,
        port: 0,
        env: {},
        headers,
        corsOrigins: [new URL(page.url).origin],
      });
      try {
        assert.equal(await readFromPage(named), 'read 200: [{"id":7}]');
      } finally {
        await named.close();
      }
    } finally {
      await gateway.close();
    }
  });
});
