import type { PetstoreMock } from "../core/petstore-mock.ts";
import { mountPrefix, webHandler } from "../core/web.ts";

/**
 * A Playwright route handler that answers the page's requests with the mock's rules, no server
 * involved: `await page.route("https://api.example.test/**", petstoreRoute(mock))`. `baseUrl`, when the
 * API is mounted under a path (`https://example.test/petstore/v1`), has that path taken off first.
 * Faults: Playwright cannot cut a body in half, so `truncate`, like `close`, aborts the request.
 */
export function petstoreRoute(
  mock: PetstoreMock,
  options: { baseUrl?: string } = {},
): (route: PlaywrightRoute) => Promise<void> {
  const prefix = options.baseUrl ? mountPrefix(options.baseUrl) : "";
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

/**
 * What the handler uses of Playwright's `Route`, written out so that the types need no Playwright package of
 * a particular name: `@playwright/test`, `playwright` and `playwright-core` all pass their Route here.
 */
export interface PlaywrightRoute {
  request(): {
    method(): string;
    url(): string;
    allHeaders(): Promise<Record<string, string>>;
    postDataBuffer(): Buffer | null;
  };
  fulfill(response: { status: number; headers: Record<string, string>; body: Buffer }): Promise<void>;
  abort(errorCode?: string): Promise<void>;
}
