import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { createControlClient } from "../../contract/control-client.ts";
import { chromiumSkip, launchChromium, seriousAxeViolations } from "../../test-support/chromium.ts";
import {
  MILLION_ORDERS_START_MS,
  type MockProcess,
  startMockProcess,
} from "../../test-support/spawn-mock.ts";
import { AUTH, DEV_KEY } from "./support.ts";

const skip = chromiumSkip;
const OUTPUT = fileURLToPath(new URL("../../test-output/", import.meta.url));

describe("the dashboard page in Chromium", { skip }, () => {
  let mock: MockProcess;
  let origin: string;
  let browser: Browser;
  let consoleErrors: string[];
  let foreignRequests: string[];

  before(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    mock = await startMockProcess(["--quiet"]);
    origin = new URL(mock.url).origin;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await mock?.stop();
  });

  /** The dashboard on a session (or the default world), watched for console errors and foreign requests. */
  async function open(
    session?: string,
    options: { bypassCSP?: boolean; width?: number; height?: number } = {},
  ) {
    const context = await browser.newContext({
      bypassCSP: options.bypassCSP ?? false,
      viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    });
    const page = await context.newPage();
    consoleErrors = [];
    foreignRequests = [];
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    page.on("request", (sent) => {
      if (!sent.url().startsWith(origin)) foreignRequests.push(sent.url());
    });
    const response = await page.goto(`${origin}/__control/${session ? `?session=${session}` : ""}`);
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()["content-security-policy"] ?? "", /default-src 'self'/);
    await page.getByLabel("Status of order 2").waitFor();
    return page;
  }

  const cancel = (id: string, session?: string) =>
    fetch(`${mock.url}/store/orders/${id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${DEV_KEY}`, ...(session ? { "x-mock-session": session } : {}) },
    }).then((response) => response.status);

  const statusOf = async (id: string, session?: string) =>
    (await createControlClient(mock.url, session ? { session } : {}).orders()).find(
      (order) => order.id === id,
    )?.status;

  it("ships an order from its status control, and Reset brings the fixtures back", async () => {
    const page = await open();
    await page.getByLabel("Status of order 2").selectOption("shipped");
    await page.getByText("Order 2 is now shipped.").waitFor();
    assert.equal(await cancel("2"), 409);
    page.once("dialog", (dialog) => dialog.accept());
    await page.getByRole("button", { name: "Reset", exact: true }).click();
    await page.getByText("Reset the default world.").waitFor();
    assert.equal(await cancel("2"), 204);
    // The ids above 2^53 are shown digit for digit.
    await page.getByRole("cell", { name: "9007199254740993", exact: true }).waitFor();
    await page.getByRole("cell", { name: "9223372036854775807", exact: true }).waitFor();
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(foreignRequests, []);
    await page.context().close();
  });

  it("shows a request the test just sent in the journal (it polls once a second; the wait is only a bound)", async () => {
    const page = await open("journal");
    assert.equal(await cancel("424242", "journal"), 404);
    const row = page.locator("#journal tbody tr", { hasText: "DELETE /v1/store/orders/424242" });
    await row.waitFor({ timeout: 15_000 });
    assert.match(await row.innerText(), /404\s+client error/);
    const refused = await fetch(`${mock.url}/store/orders`, {
      headers: { authorization: "Bearer wrong", "x-mock-session": "journal" },
    });
    assert.equal(refused.status, 401);
    await page.getByText(/has refused \d+ requests? for a missing or wrong key/).waitFor({ timeout: 15_000 });
    assert.equal(await page.locator("#journal tbody tr", { hasText: "GET /v1/store/orders" }).count(), 0);
    await page.context().close();
  });

  it("shows the journal's latest 50 entries with a button for more, a 1000-digit id wrapping in its own column", async () => {
    const session = "journal-long";
    const long = "9".repeat(1000);
    assert.equal(await cancel(long, session), 404);
    for (let sent = 1; sent < 120; sent += 17) {
      await Promise.all(Array.from({ length: 17 }, (_, at) => cancel(String(5_000 + sent + at), session)));
    }
    const page = await open(session);
    const rows = page.locator("#journal tbody tr");
    await rows.first().waitFor({ timeout: 15_000 });
    assert.equal(await rows.count(), 50);
    await page.getByRole("button", { name: "Show 50 more" }).click();
    assert.equal(await rows.count(), 100);
    await page.getByRole("button", { name: "Show 20 more" }).click();
    assert.equal(await rows.count(), 120);
    assert.equal(await page.locator("#journal-more").isVisible(), false);

    const longRow = rows.last();
    const request = longRow.locator("td").nth(1);
    assert.match((await request.getAttribute("title")) ?? "", /^DELETE \/v1\/store\/orders\/9{100}/);
    assert.ok((await request.innerText()).length <= 161, "the row shows the start of the request");
    const widths = await longRow
      .locator("td")
      .evaluateAll((cells) => cells.map((cell) => cell.getBoundingClientRect().width));
    for (const [index, width] of widths.entries()) {
      if (index !== 1) assert.ok(width >= 90, `column ${index} keeps its width (${widths.join(", ")} px)`);
    }
    assert.deepEqual(consoleErrors, []);
    await page.context().close();
  });

  it("changes made in one session through the page are not seen in another, nor in the default world", async () => {
    const page = await open("alpha");
    await page.getByLabel("Status of order 3").selectOption("shipped");
    await page.getByText("Order 3 is now shipped.").waitFor();
    await page.getByLabel("Remove order 5").click();
    await page.getByText("Order 5 was removed.").waitFor();
    assert.equal(await statusOf("3", "alpha"), "shipped");
    assert.equal(await statusOf("5", "alpha"), undefined);
    assert.equal(await statusOf("3", "beta"), "pending");
    assert.equal(await statusOf("5", "beta"), "pending");
    assert.equal(await statusOf("3"), "pending");
    await page.getByLabel("Showing").selectOption("beta");
    await page.getByLabel("Remove order 5").waitFor();
    assert.equal(await page.getByLabel("Status of order 3").inputValue(), "pending");
    await page.context().close();
  });

  it("adds an order from the form, and shows the mock's refusal next to the field", async () => {
    const page = await open("adding");
    await page.getByLabel("Id", { exact: true }).fill("9223372036854775806");
    await page.getByLabel("Pet id").fill("9007199254740995");
    await page.getByLabel("Ship date (RFC 3339)").fill("next tuesday");
    await page.getByRole("button", { name: "Save order" }).click();
    await page.locator("#add-shipDate-error", { hasText: "date-time" }).waitFor();
    assert.equal(await page.getByLabel("Ship date (RFC 3339)").getAttribute("aria-invalid"), "true");
    await page.getByLabel("Ship date (RFC 3339)").fill("2026-12-24T18:00:00+01:00");
    await page.getByRole("button", { name: "Save order" }).click();
    await page.getByText("Order 9223372036854775806 was saved.").waitFor();
    const orders = await createControlClient(mock.url, { session: "adding" }).orders();
    assert.deepEqual(orders.at(-1), {
      id: "9223372036854775806",
      petId: "9007199254740995",
      shipDate: "2026-12-24T18:00:00+01:00",
      status: "pending",
    });
    await page.context().close();
  });

  it("edits behaviour rules that the API then follows", async () => {
    const page = await open("rules");
    await page.getByRole("button", { name: "Add rule" }).click();
    await page.getByLabel("Operation of rule 1").selectOption("cancelOrder");
    await page.getByLabel("Answer of rule 1").selectOption("status:409");
    await page.getByLabel("Times of rule 1").fill("1");
    await page.getByRole("button", { name: "Save behaviour" }).click();
    await page.getByText("Behaviour saved.").waitFor();
    assert.equal(await cancel("2", "rules"), 409);
    assert.equal(await cancel("2", "rules"), 204);
    await page.context().close();
  });

  it("renders a hostile path in the journal as text: no script runs, no element is made from it", async () => {
    const page = await open("hostile");
    let dialogs = 0;
    page.on("dialog", (dialog) => {
      dialogs++;
      void dialog.dismiss();
    });
    const hostile = "/v1/<img/src=x/onerror=alert(1)>";
    await new Promise<void>((resolve, reject) => {
      // A path given as such goes out byte for byte; a URL would be percent-encoded first.
      const { hostname, port } = new URL(origin);
      const target = { hostname, port, path: hostile, headers: { "x-mock-session": "hostile", ...AUTH } };
      const sent = request(target, (answer) => {
        answer.resume();
        answer.on("end", resolve);
      });
      sent.on("error", reject);
      sent.end();
    });
    await page.getByText(`GET ${hostile}`, { exact: true }).waitFor({ timeout: 15_000 });
    assert.equal(await page.locator("#journal img").count(), 0);
    assert.equal(await page.locator("img").count(), 0);
    assert.equal(dialogs, 0);
    await page.context().close();
  });

  it("lets a keyboard user reach an order's status control with Tab and change it", async () => {
    const page = await open("keyboard");
    const target = "Status of order 7";
    let reached = false;
    for (let presses = 0; presses < 80 && !reached; presses++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(
        (label) => document.activeElement?.getAttribute("aria-label") === label,
        target,
      );
    }
    assert.ok(reached, `${target} is reachable with Tab`);
    await page.keyboard.press("ArrowDown");
    await page.getByText("Order 7 is now shipped.").waitFor();
    assert.equal(await statusOf("7", "keyboard"), "shipped");
    await page.context().close();
  });

  it("has no serious or critical accessibility violation (axe-core)", async () => {
    // axe is injected as an inline script, which the page's own policy rightly forbids.
    const page = await open("axe", { bypassCSP: true });
    assert.deepEqual(await seriousAxeViolations(page), []);
    await page.context().close();
  });

  for (const [name, width, height] of [
    ["phone", 390, 844],
    ["desktop", 1280, 800],
  ] as const) {
    it(`fits a ${name} screen (${width} × ${height}) with nothing overflowing sideways`, async () => {
      const page: Page = await open(`screen-${name}`, { width, height });
      await cancel("2", `screen-${name}`);
      await page.locator("#journal tbody tr").first().waitFor({ timeout: 15_000 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      await page.screenshot({ path: `${OUTPUT}dashboard-${name}.png`, fullPage: true });
      await page.screenshot({ path: `${OUTPUT}dashboard-${name}-first-screen.png` });
      assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`);
      assert.deepEqual(consoleErrors, []);
      await page.context().close();
    });
  }
});

describe("the dashboard over a world of a million orders, in Chromium", { skip }, () => {
  let mock: MockProcess;
  let browser: Browser;
  before(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    mock = await startMockProcess(["--quiet", "--generate", "1000000"], {}, MILLION_ORDERS_START_MS);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await mock?.stop();
  });

  it("asks only for pages of orders, pages on, filters by status and finds an id, while the mock keeps answering", async () => {
    const origin = new URL(mock.url).origin;
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const asked: string[] = [];
    const answeredBytes: number[] = [];
    page.on("response", async (response) => {
      const url = new URL(response.url());
      if (url.pathname !== "/__control/orders") return;
      asked.push(`${url.search}`);
      answeredBytes.push((await response.body()).length);
    });
    const loaded = page.goto(`${origin}/__control/`);
    // The health check a load balancer sends, while the page loads.
    const health = await fetch(`${origin}/__health`);
    assert.equal(health.status, 200);
    await loaded;
    await page.getByText("Orders from place 1 on: 100 of 1,000,000.").waitFor();
    assert.equal(await page.locator("#orders tbody tr").count(), 100);
    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByText("Orders from place 101 on: 100 of 1,000,000.").waitFor();
    await page.getByRole("button", { name: "Previous page" }).click();
    await page.getByText("Orders from place 1 on: 100 of 1,000,000.").waitFor();
    await page.getByLabel("Only status").selectOption("shipped");
    await page.getByText(/^100 shipped orders on this page, of 1,000,000 in this world\.$/).waitFor();
    const shipped = await page
      .locator("#orders tbody select")
      .evaluateAll((selects) => selects.map((select) => (select as HTMLSelectElement).value));
    assert.deepEqual([...new Set(shipped)], ["shipped"]);
    const shippedId = await page.locator("#orders tbody td.id").first().innerText();
    await page.getByLabel("Find id").fill(shippedId);
    await page.getByText(`Order ${shippedId}.`, { exact: true }).waitFor();
    assert.equal(await page.locator("#orders tbody tr").count(), 1);
    await page.getByLabel("Find id").fill("424242424242");
    await page.getByText("No order has the id 424242424242.", { exact: true }).waitFor();
    await page.getByLabel("Find id").fill("");
    await page.getByText(/^100 shipped orders on this page/).waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${OUTPUT}dashboard-million.png` });
    assert.ok(
      asked.every((search) => /(^|[?&])(limit=100|id=\d+)(&|$)/.test(search)),
      `every order request asks for a page or an id: ${asked.join(" ")}`,
    );
    assert.ok(Math.max(...answeredBytes) < 100_000, `answers of at most a page: ${answeredBytes.join(", ")}`);
    await context.close();
  });
});
