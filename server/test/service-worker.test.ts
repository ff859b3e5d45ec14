import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { chromiumSkip, fourRequests, launchChromium } from "../../test-support/chromium.ts";
import { BUNDLED_FIXTURES } from "../options.ts";
import { DEV_KEY } from "./support.ts";

const skip = chromiumSkip;
const APP = fileURLToPath(new URL("./service-worker-app.ts", import.meta.url));
const WORKER = fileURLToPath(new URL("../../node_modules/msw/lib/mockServiceWorker.js", import.meta.url));
// No server listens there: every answer comes from the Service Worker.
const API = "http://petstore.invalid/v1";

describe("MSW's Service Worker in Chromium with the browser build of the mock", { skip }, () => {
  let browser: Browser;
  let site: Server;
  let origin: string;
  before(async () => {
    const bundle = await build({
      entryPoints: [APP],
      bundle: true,
      format: "esm",
      platform: "browser",
      write: false,
    });
    const files: Record<string, [string, string | Buffer]> = {
      "/": ["text/html", '<!doctype html><title>app</title><script type="module" src="/app.js"></script>'],
      "/app.js": ["text/javascript", bundle.outputFiles[0]?.text ?? ""],
      "/mockServiceWorker.js": ["text/javascript", readFileSync(WORKER)],
      "/fixtures.json": ["application/json", readFileSync(BUNDLED_FIXTURES)],
    };
    site = createServer((request, response) => {
      const file = files[request.url ?? ""];
      if (!file) return response.writeHead(404).end();
      response.writeHead(200, { "content-type": file[0] }).end(file[1]);
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    site?.close();
  });

  it("lists, cancels (204), cancels again (409) and is refused without the key (401), ids exact", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${origin}/`);
    await page.waitForFunction(
      () => (window as unknown as { petstoreReady?: boolean }).petstoreReady === true,
    );
    const result = await fourRequests(page, API, DEV_KEY);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      { ...result, text: undefined },
      { list: 200, text: undefined, cancel: 204, again: 409, refused: 401 },
    );
    assert.match(result.text, /"id":9007199254740993,/);
    assert.match(result.text, /"id":9223372036854775807,/);
    await page.close();
  });
});
