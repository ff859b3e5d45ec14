import { http, type RequestHandler } from "msw";
import type { PetstoreMock } from "../core/petstore-mock.ts";
import { mountPrefix, webHandler } from "../core/web.ts";

/**
 * Mock Service Worker request handlers that answer this API with the mock's own rules, for
 * `setupServer(...petstoreHandlers(mock, { baseUrl }))` in Node or `setupWorker(...)` in a browser.
 * `baseUrl` is where the app calls the API: `https://api.example.test/v1` (or without `/v1`; a path in
 * front of it, as in `https://example.test/petstore/v1`, is taken off before the mock sees the request).
 */
export function petstoreHandlers(mock: PetstoreMock, options: { baseUrl: string }): RequestHandler[] {
  const base = new URL(options.baseUrl);
  const prefix = mountPrefix(options.baseUrl);
  const handle = webHandler(mock.core, prefix);
  // A RegExp, not a path pattern: MSW decodes a pattern's parameters and fails on a malformed escape
  // (`/store/orders/%zz`), which the mock must answer with its own 400.
  const mounted = new RegExp(`^${escapeRegExp(`${base.origin}${prefix}`)}/`);
  return [http.all(mounted, ({ request }) => handle(request))];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
