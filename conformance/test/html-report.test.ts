import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { chromiumSkip, launchChromium, seriousAxeViolations } from "../../test-support/chromium.ts";
import { PENDING_ID, SHIPPED_ID, startTarget, TARGET_KEY } from "../../test-support/target-server.ts";
import { runProxy } from "../proxy/run-proxy.ts";
import { renderHtml } from "../reports/html.ts";
import { runConformance } from "../suite/runner.ts";

const skip = chromiumSkip;
const OUTPUT = fileURLToPath(new URL("../../test-output/", import.meta.url));

describe("the HTML report in Chromium, opened from disk", { skip }, () => {
  let browser: Browser;
  let reportUrl: string;
  before(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    const target = await startTarget({ shippedCancellable: true });
    try {
      const report = await runConformance({
        baseUrl: target.url,
        apiKey: TARGET_KEY,
        pendingOrderId: PENDING_ID,
        shippedOrderId: SHIPPED_ID,
        skip: ["list-no-paging"],
      });
      const path = `${OUTPUT}conformance-report.html`;
      writeFileSync(path, renderHtml(report));
      reportUrl = pathToFileURL(path).href;
    } finally {
      await target.close();
    }
    browser = await launchChromium();
  });
  after(() => browser?.close());

  it("loads with no console error and no request beyond the file, summary first, the failure's evidence open", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    const requests: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("request", (request) => requests.push(request.url()));
    await page.goto(reportUrl);
    assert.deepEqual(errors, []);
    assert.deepEqual(requests, [reportUrl], "nothing but the file itself");

    const headings = await page.locator("h2").allInnerTexts();
    assert.equal(headings[0], "Summary");
    assert.match(await page.locator(".summary").innerText(), /1 failed/);
    const failure = page.locator("li.check.failed", { hasText: "cancel-shipped.cancel.status" });
    assert.ok(await failure.locator("details").evaluate((details) => (details as HTMLDetailsElement).open));
    for (const evidence of [
      "expected 409, got 204",
      "Spec: §3, §4.2, §7",
      "DELETE /v1/store/orders/2",
      "authorization: Bearer ***",
    ]) {
      assert.ok(await failure.getByText(evidence, { exact: false }).first().isVisible(), evidence);
    }
    assert.match(await page.getByText("Skipped: skipped with skip").innerText(), /with skip/);

    // It opens on what failed: the failed scenario first, the passed ones one closed line each.
    const sections = page.locator("section.scenario");
    assert.match((await sections.first().getAttribute("class")) ?? "", /\bfailed\b/);
    assert.match(await sections.first().innerText(), /^✖ cancel-shipped/);
    const passed = page.locator("section.scenario.passed");
    assert.ok((await passed.count()) >= 5);
    for (const open of await passed
      .locator("> details")
      .evaluateAll((all) => all.map((details) => (details as HTMLDetailsElement).open)))
      assert.equal(open, false);
    assert.match(await passed.first().innerText(), /^✔ \S+ .* \(\d+ checks passed\)$/);
    const reproduction = failure.locator("pre[id^=reproduce-]");
    assert.match(
      await reproduction.innerText(),
      /^curl -sS -i --path-as-is .* -X DELETE '.*\/v1\/store\/orders\/2'/s,
    );
    assert.match(await reproduction.innerText(), /\$\{PETSTORE_API_KEY\}/);
    await failure.getByRole("button", { name: "Copy" }).click();
    const selected = await page.evaluate(() => getSelection()?.toString() ?? "");
    assert.equal(selected.trim(), (await reproduction.innerText()).trim(), "the reproduction is selected");
    assert.match(await failure.locator("button.copy").innerText(), /^(Copied|Selected: press Ctrl\+C)$/);
    await page.screenshot({ path: `${OUTPUT}conformance-report.png`, fullPage: true });

    await page.getByLabel("Show only what did not pass").check();
    assert.equal(await page.locator("section.scenario.passed").first().isVisible(), false);
    assert.ok(await failure.isVisible());
    await page.screenshot({ path: `${OUTPUT}conformance-report-failures-only.png`, fullPage: false });
    await page.close();
  });

  it("has no serious or critical accessibility violation (axe-core)", async () => {
    const page = await browser.newPage();
    await page.goto(reportUrl);
    assert.deepEqual(await seriousAxeViolations(page), []);
    await page.close();
  });

  it("a report of traffic through the proxy: the state finding open, the coverage table readable, no axe violation", async () => {
    const target = await startTarget({ cancelWithoutTransition: true });
    let path: string;
    try {
      const proxy = await runProxy({ upstream: target.url, port: 0, env: {} });
      await runConformance({ baseUrl: proxy.url, apiKey: TARGET_KEY, pendingOrderId: PENDING_ID, env: {} });
      path = `${OUTPUT}proxy-traffic-report.html`;
      writeFileSync(path, renderHtml(await proxy.close()));
    } finally {
      await target.close();
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(pathToFileURL(path).href);
    const finding = page.locator("li.check.failed", { hasText: "state.cancel-once" });
    assert.ok(await finding.locator("details").evaluate((details) => (details as HTMLDetailsElement).open));
    assert.match(
      await finding.innerText(),
      /order 9007199254740993 was cancelled twice: #\d+ DELETE .*, #\d+ DELETE/,
    );
    const coverage = page.getByRole("table");
    assert.match(await coverage.innerText(), /DELETE \/store\/orders\/\{orderId\}\s+204\s+\d+/);
    assert.match(
      await coverage.innerText(),
      /409\s+never/,
      "the shipped order was never named, so no 409 was seen",
    );
    await page.getByRole("heading", { name: "Coverage" }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${OUTPUT}proxy-traffic-report.png`, fullPage: true });
    assert.deepEqual(await seriousAxeViolations(page), []);
    await page.close();
  });
});
