import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { chromiumSkip, fourRequests, launchChromium } from "../../test-support/chromium.ts";
import { petstoreRoute } from "../adapters/playwright.ts";
import { createPetstoreMock } from "../in-process.ts";
import { BUNDLED_FIXTURES } from "../options.ts";
import { DEV_KEY } from "./support.ts";

const skip = chromiumSkip;
// No server listens there: every answer comes from the route.
const API = "http://petstore.invalid/v1";

describe("the Playwright route adapter in Chromium", { skip }, () => {
  let browser: Browser;
  let page: Server;
  let pageUrl: string;
  before(async () => {
    page = createServer((_request, response) => {
      response.setHeader("content-type", "text/html");
      response.end("<!doctype html><title>app</title><p>app</p>");
    });
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    page?.close();
  });

  it("lists, cancels (204), cancels again (409) and is refused without the key (401), ids exact", async () => {
    const mock = createPetstoreMock({ fixtures: readFileSync(BUNDLED_FIXTURES, "utf8") });
    const tab = await browser.newPage();
    await tab.route(`${API.replace("/v1", "")}/**`, petstoreRoute(mock));
    await tab.goto(pageUrl);
    const result = await fourRequests(tab, API, DEV_KEY);
    assert.deepEqual(
      { ...result, text: undefined },
      {
        list: 200,
        text: undefined,
        cancel: 204,
        again: 409,
        refused: 401,
      },
    );
    assert.match(result.text, /"id":9007199254740993,/);
    assert.match(result.text, /"id":9223372036854775807,/);
    const orders = await mock.control.orders();
    assert.equal(orders.find((order) => order.id === "9007199254740993")?.status, "cancelled");
    await tab.close();
  });

  it("carries out a close fault as a failed request", async () => {
    const mock = createPetstoreMock({ fixtures: readFileSync(BUNDLED_FIXTURES, "utf8") });
    await mock.control.behaviour({ rules: [{ operation: "listOrders", fault: "close", times: 1 }] });
    const tab = await browser.newPage();
    await tab.route(`${API.replace("/v1", "")}/**`, petstoreRoute(mock));
    await tab.goto(pageUrl);
    const outcome = await tab.evaluate(
      async ({ api, key }) => {
        const headers = { authorization: `Bearer ${key}` };
        const first = await fetch(`${api}/store/orders`, { headers }).then(
          (response) => `status ${response.status}`,
          (error: Error) => `failed: ${error.name}`,
        );
        const second = await fetch(`${api}/store/orders`, { headers }).then(
          (response) => `status ${response.status}`,
        );
        return [first, second];
      },
      { api: API, key: DEV_KEY },
    );
    assert.deepEqual(outcome, ["failed: TypeError", "status 200"]);
    await tab.close();
  });
});
