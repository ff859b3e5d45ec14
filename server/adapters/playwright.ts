import type { Route } from "playwright-core";
import type { PetstoreMock } from "../core/petstore-mock.ts";
import { webHandler } from "../core/web.ts";

/**
 * A Playwright route handler that answers the page's requests with the mock's rules, no server
 * involved: `await page.route("https://api.example.test/**", petstoreRoute(mock))`. `baseUrl`, when the
 * API is mounted under a path (`https://example.test/petstore/v1`), has that path taken off first.
 * Faults: Playwright cannot cut a body in half, so `truncate`, like `close`, aborts the request.
 */
export function petstoreRoute(
  mock: PetstoreMock,
  options: { baseUrl?: string } = {},
): (route: Route) => Promise<void> {
  const prefix = options.baseUrl
    ? new URL(options.baseUrl).pathname.replace(/\/+$/, "").replace(/\/v1$/, "")
    : "";
  const handle = webHandler(mock.core, prefix);
  return async (route) => {
    const sent = route.request();
    const method = sent.method();
    const headers = Object.entries(await sent.allHeaders()).filter(([name]) => !name.startsWith(":"));
    const body = method === "GET" || method === "HEAD" ? null : sent.postDataBuffer();
    const response = await handle(
      new Request(sent.url(), { method, headers, ...(body ? { body: new Uint8Array(body) } : {}) }),
    );
    if (response.type === "error") return route.abort("connectionreset");
    let bytes: ArrayBuffer;
    try {
      bytes = await response.arrayBuffer();
    } catch {
      return route.abort("connectionreset");
    }
    return route.fulfill({
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: Buffer.from(bytes),
    });
  };
}
