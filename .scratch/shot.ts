import { chromium } from "playwright-core";

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
for (const name of process.argv.slice(2)) {
  await page.goto(`file:///work/tmp/shots/${name}.html`);
  await page.screenshot({ path: `/work/tmp/shots/${name}.png`, fullPage: true });
}
await browser.close();
