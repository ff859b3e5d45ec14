import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { chromiumSkip, launchChromium, seriousAxeViolations } from "../../test-support/chromium.ts";
import { renderExploreHtml } from "../explore/report-html.ts";
import { recordedResult } from "./explore-recorded-result.ts";

const OUTPUT = fileURLToPath(new URL("../../test-output/", import.meta.url));

describe("explore's HTML report in Chromium at 1280 px", { skip: chromiumSkip }, () => {
  let browser: Browser;
  let reportUrl: string;
  before(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    const path = `${OUTPUT}explore-report.html`;
    writeFileSync(path, renderExploreHtml(recordedResult()));
    reportUrl = pathToFileURL(path).href;
    browser = await launchChromium();
  });
  after(() => browser?.close());

  it("draws every text of the timeline inside it, with no script, request or serious accessibility finding", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    page.on("request", (request) => requests.push(request.url()));
    await page.goto(reportUrl);
    assert.deepEqual(requests, [reportUrl]);
    // A text that runs past the drawing's edges is cut off: each must lie within the view box.
    const outside = await page.evaluate(() => {
      const svg = document.querySelector("svg") as SVGSVGElement;
      const box = svg.viewBox.baseVal;
      return [...svg.querySelectorAll("text")]
        .filter((text) => {
          const bounds = text.getBBox();
          return (
            bounds.x < box.x ||
            bounds.x + bounds.width > box.x + box.width ||
            bounds.y < box.y ||
            bounds.y + bounds.height > box.y + box.height
          );
        })
        .map((text) => text.textContent);
    });
    assert.deepEqual(outside, []);
    assert.ok(
      await page.evaluate(() => document.documentElement.scrollWidth <= 1280),
      "no sideways scrolling",
    );
    await page.screenshot({ path: `${OUTPUT}explore-report.png`, fullPage: true });
    assert.deepEqual(await seriousAxeViolations(page), []);
  });
});
