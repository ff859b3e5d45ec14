import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { type CrossOriginScene, chromiumSkip, startCrossOriginScene } from "../../test-support/chromium.ts";
import type { MockProcess } from "../../test-support/spawn-mock.ts";
import { DEV_KEY } from "./support.ts";

const skip = chromiumSkip;

describe("the mock from a browser page on another origin", { skip }, () => {
  let scene: CrossOriginScene;
  let mock: MockProcess;
  let page: CrossOriginScene["page"];
  let browser: Browser;

  before(async () => {
    scene = await startCrossOriginScene();
    ({ mock, page, browser } = scene);
  });
  after(() => scene?.close());

  it("lists and cancels orders with fetch and reads error records", async () => {
    const tab = await browser.newPage();
    await tab.goto(page.url);
    const result = await tab.evaluate(
      async ({ base, key }) => {
        const headers = { Authorization: `Bearer ${key}` };
        const list = await fetch(`${base}/store/orders`, { headers });
        const orders = await list.text();
        const cancel = await fetch(`${base}/store/orders/2`, { method: "DELETE", headers });
        const again = await fetch(`${base}/store/orders/2`, { method: "DELETE", headers });
        const unauthorized = await fetch(`${base}/store/orders`);
        return {
          origin: location.origin,
          list: list.status,
          orders,
          cancel: cancel.status,
          again: again.status,
          againBody: await again.json(),
          unauthorized: unauthorized.status,
          challenge: unauthorized.headers.get("WWW-Authenticate"),
        };
      },
      { base: mock.url, key: DEV_KEY },
    );
    assert.notEqual(new URL(result.origin).port, new URL(mock.url).port);
    assert.equal(result.list, 200);
    assert.match(result.orders, /"id":9007199254740993/);
    assert.equal(result.cancel, 204);
    assert.equal(result.again, 409);
    assert.equal(result.againBody.code, "order_not_cancellable");
    assert.equal(result.unauthorized, 401);
    assert.equal(result.challenge, 'Bearer realm="petstore"');
  });
});
