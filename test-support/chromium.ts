import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { type MockProcess, startMockProcess } from "./spawn-mock.ts";

const AXE = fileURLToPath(new URL("../node_modules/axe-core/axe.min.js", import.meta.url));

const CHROMIUM = "/usr/bin/chromium";

/** CI installs Chromium (.ci/run); elsewhere a missing browser is reported as a skip, never as a pass. */
export const chromiumSkip =
  !existsSync(CHROMIUM) && !process.env.CI ? `no ${CHROMIUM}: apt-get install -y chromium` : false;

/** Debian's Chromium, headless, without the background traffic a desktop browser makes. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export interface FourRequests {
  list: number;
  text: string;
  cancel: number;
  again: number;
  refused: number;
}

/** From the page: list, cancel the pending order above 2^53, cancel it again, list without the key. */
export function fourRequests(page: Page, api: string, key: string): Promise<FourRequests> {
  return page.evaluate(
    async ({ api, key }) => {
      const headers = { authorization: `Bearer ${key}` };
      const list = await fetch(`${api}/store/orders`, { headers });
      const text = await list.text();
      const cancel = await fetch(`${api}/store/orders/9007199254740993`, { method: "DELETE", headers });
      const again = await fetch(`${api}/store/orders/9007199254740993`, { method: "DELETE", headers });
      const refused = await fetch(`${api}/store/orders`);
      return { list: list.status, text, cancel: cancel.status, again: again.status, refused: refused.status };
    },
    { api, key },
  );
}

/** axe-core's serious and critical findings on the page as it is, one line each; none is the goal. */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const results = (await page.evaluate(() =>
    (window as unknown as { axe: { run(): Promise<unknown> } }).axe.run(),
  )) as { violations: Array<{ id: string; impact: string; help: string; nodes: unknown[] }> };
  return results.violations
    .filter((violation) => ["serious", "critical"].includes(violation.impact))
    .map(({ id, help, nodes }) => `${id}: ${help} (${nodes.length})`);
}

/**
 * A page of a frontend app on an origin of its own (localhost, while the servers under test answer on
 * 127.0.0.1), so that the browser's calls from it are cross-origin.
 */
export async function serveAppPage(): Promise<{ url: string; close: () => void }> {
  const page = createServer((_request, response) => {
    response.setHeader("content-type", "text/html");
    response.end("<!doctype html><title>frontend</title><p>frontend</p>");
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  return { url: `http://localhost:${(page.address() as AddressInfo).port}/`, close: () => page.close() };
}

/** The mock as a process, a frontend page on another origin, and Chromium: what a CORS test needs. */
export interface CrossOriginScene {
  mock: MockProcess;
  page: { url: string; close: () => void };
  browser: Browser;
  close(): Promise<void>;
}

export async function startCrossOriginScene(): Promise<CrossOriginScene> {
  const mock = await startMockProcess(["--quiet"]);
  const page = await serveAppPage();
  const browser = await launchChromium();
  return {
    mock,
    page,
    browser,
    async close() {
      await browser.close();
      page.close();
      await mock.stop();
    },
  };
}
