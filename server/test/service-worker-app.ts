// The page the Service Worker test loads: MSW's worker with the browser build of the mock.
import { setupWorker } from "msw/browser";
import { createPetstoreMock, petstoreHandlers } from "../browser.ts";

const API = "http://petstore.invalid/v1";

async function start(): Promise<void> {
  const fixtures = await (await fetch("/fixtures.json")).text();
  const mock = createPetstoreMock({ fixtures });
  await setupWorker(...petstoreHandlers(mock, { baseUrl: API })).start({
    quiet: true,
    onUnhandledRequest: "bypass",
  });
  (window as unknown as { petstoreReady: boolean }).petstoreReady = true;
}

void start();
