import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

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
