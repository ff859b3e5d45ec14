import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { type CrossOriginScene, chromiumSkip, startCrossOriginScene } from "../../test-support/chromium.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { DEV_KEY } from "./support.ts";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with exactly these headers (Host included), as a browser or an attacker's page sends it. */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { hostname: target.hostname, port: target.port, path: target.pathname, method, headers },
      (incoming) => {
        let text = "";
        incoming.on("data", (chunk) => {
          text += chunk;
        });
        incoming.on("end", () =>
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: text }),
        );
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

describe("the control API answers only this machine's own tools and pages", () => {
  let mock: MockProcess;
  let origin: string;
  let host: string;
  before(async () => {
    mock = await startMockProcess(["--quiet", "--allowed-host", "mock.test"]);
    origin = new URL(mock.url).origin;
    host = new URL(mock.url).host;
  });
  after(() => mock.stop());

  it("refuses a Host name it does not answer to (DNS rebinding) with 403 foreign_host; loopback names pass", async () => {
    const rebound = await send(`${origin}/__control/orders`, "GET", { host: "rebind.attacker.example" });
    assert.equal(rebound.status, 403);
    assert.equal(JSON.parse(rebound.body).code, "foreign_host");
    for (const name of [host, `localhost:${new URL(origin).port}`, "mock.test"]) {
      const own = await send(`${origin}/__control/orders`, "GET", { host: name });
      assert.equal(own.status, 200, name);
    }
    // The API itself is not the control API: it answers any Host, as a deployment behind any name would.
    const api = await send(`${mock.url}/store/orders`, "GET", {
      host: "rebind.attacker.example",
      authorization: `Bearer ${DEV_KEY}`,
    });
    assert.equal(api.status, 200);
  });

  it("refuses a page of another origin, even a 'simple' text/plain POST, and changes nothing", async () => {
    const cancelled = await fetch(`${mock.url}/store/orders/2`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${DEV_KEY}`, "x-mock-session": "local-only" },
    });
    assert.equal(cancelled.status, 204);
    const reset = await send(
      `${origin}/__control/reset`,
      "POST",
      { host, origin: "http://evil.example", "content-type": "text/plain", "x-mock-session": "local-only" },
      "{}",
    );
    assert.equal(reset.status, 403);
    assert.equal(JSON.parse(reset.body).code, "foreign_origin");
    assert.equal(reset.headers["access-control-allow-origin"], undefined);
    const again = await fetch(`${mock.url}/store/orders/2`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${DEV_KEY}`, "x-mock-session": "local-only" },
    });
    assert.equal(again.status, 409, "the refused reset changed nothing");
    const crossSite = await send(`${origin}/__control/orders`, "GET", {
      host,
      "sec-fetch-site": "cross-site",
    });
    assert.equal(crossSite.status, 403);
  });

  it("never answers the control API with Access-Control-Allow-Origin: *, preflights included; the API still does", async () => {
    const own = await send(`${origin}/__control/orders`, "GET", { host, origin });
    assert.equal(own.status, 200);
    assert.equal(own.headers["access-control-allow-origin"], undefined);
    const preflight = await send(`${origin}/__control/reset`, "OPTIONS", {
      host,
      origin: "http://evil.example",
      "access-control-request-method": "POST",
    });
    assert.equal(preflight.headers["access-control-allow-origin"], undefined);
    const api = await send(`${mock.url}/store/orders`, "GET", {
      host,
      origin: "http://app.example",
      authorization: `Bearer ${DEV_KEY}`,
    });
    assert.equal(api.headers["access-control-allow-origin"], "*");
  });

  it("answers a page of an origin --cors-origin names", async () => {
    const named = await startMockProcess(["--quiet", "--cors-origin", "http://app.example"]);
    try {
      const target = new URL(named.url);
      const answer = await send(`${target.origin}/__control/orders`, "GET", {
        host: target.host,
        origin: "http://app.example",
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers["access-control-allow-origin"], "http://app.example");
    } finally {
      await named.stop();
    }
  });
});

describe("a page on another origin in Chromium", { skip: chromiumSkip }, () => {
  let scene: CrossOriginScene;
  before(async () => {
    scene = await startCrossOriginScene();
  });
  after(() => scene?.close());

  it("cannot steer the control API, with any request a page can send, while the dashboard still works", async () => {
    const origin = new URL(scene.mock.url).origin;
    const cancel = () =>
      fetch(`${scene.mock.url}/store/orders/2`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${DEV_KEY}` },
      }).then((response) => response.status);
    assert.equal(await cancel(), 204);
    const page = await scene.browser.newPage();
    await page.goto(scene.page.url);
    const attempts = await page.evaluate(async (control) => {
      const outcomes: string[] = [];
      for (const init of [
        { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" },
        { method: "POST", mode: "no-cors" as const, headers: { "content-type": "text/plain" }, body: "{}" },
        { method: "PUT", headers: { "content-type": "application/json" }, body: '{"delayMs":0,"rules":[]}' },
        { method: "GET" },
      ]) {
        const path =
          init.method === "PUT"
            ? "/__control/behaviour"
            : init.method === "GET"
              ? "/__control/orders"
              : "/__control/reset";
        try {
          const response = await fetch(`${control}${path}`, init as RequestInit);
          outcomes.push(`${init.method} ${response.type} ${response.status}`);
        } catch (error) {
          outcomes.push(`${init.method} refused: ${(error as Error).name}`);
        }
      }
      return outcomes;
    }, origin);
    // Nothing the page could read, and the reset it sent without asking changed nothing.
    for (const outcome of attempts) assert.match(outcome, /refused|opaque 0/, outcome);
    assert.equal(await cancel(), 409);
    // The dashboard, served by the mock itself, still reads and changes the world.
    const dashboard = await scene.browser.newPage();
    await dashboard.goto(`${origin}/__control/`);
    const status = await dashboard.evaluate(async () => {
      const response = await fetch("/__control/reset", { method: "POST" });
      return response.status;
    });
    assert.equal(status, 204);
    assert.equal(await cancel(), 204, "the dashboard's reset took");
    await page.close();
    await dashboard.close();
  });
});
