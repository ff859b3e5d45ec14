import { BASE_PATH } from "./api.ts";
import { type MockRequest, type MockResponse, wholeBytes } from "./exchange.ts";
import type { MockCore } from "./mock.ts";

/** What is in front of the API in an app's base address (`/petstore` of `/petstore/v1`), to be taken off. */
export function mountPrefix(baseUrl: string): string {
  const path = new URL(baseUrl).pathname.replace(/\/+$/, "");
  return path.endsWith(BASE_PATH) ? path.slice(0, -BASE_PATH.length) : path;
}

/**
 * The core as a Web-standard handler, `Request` in and `Response` out: what Mock Service Worker, a
 * Service Worker, Playwright's routes and any fetch-based runtime speak. `prefix` is a path the mock is
 * mounted under (for an API at https://example.test/petstore/v1, "/petstore"); it is taken off first.
 */
export function webHandler(core: MockCore, prefix = ""): (request: Request) => Promise<Response> {
  return async (request) => respond(await core.handle(await toMockRequest(request, prefix)), request.method);
}

export async function toMockRequest(request: Request, prefix = ""): Promise<MockRequest> {
  const url = new URL(request.url);
  const path =
    prefix && url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) || "/" : url.pathname;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body =
    request.method === "GET" || request.method === "HEAD"
      ? undefined
      : new Uint8Array(await request.arrayBuffer());
  return {
    method: request.method,
    // The raw path as sent: URL keeps percent-encoding as it came, so ids and hostile paths reach the core intact.
    url: `${path}${url.search}`,
    headers,
    ...(body && body.length > 0 ? { body } : {}),
  };
}

/** The core's answer as a Response, after its delay; `close` is a network error, `truncate` a body cut off. */
export async function respond(response: MockResponse, method: string): Promise<Response> {
  if (response.delayMs) await new Promise((resolve) => setTimeout(resolve, response.delayMs));
  if (response.fault === "close") return Response.error();
  const noBody = method === "HEAD" || response.status === 204 || response.status === 304;
  const bytes =
    response.body === undefined || noBody
      ? undefined
      : typeof response.body === "string"
        ? new TextEncoder().encode(response.body)
        : wholeBytes(response.body);
  if (response.fault === "truncate" && bytes) {
    const half = bytes.subarray(0, Math.floor(bytes.length / 2));
    const cut = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(half);
        controller.error(new TypeError("the connection was closed in the middle of the body"));
      },
    });
    return new Response(cut, {
      status: response.status,
      headers: { ...response.headers, "content-length": String(bytes.length) },
    });
  }
  // The core's bodies are backed by ordinary ArrayBuffers (TextEncoder's, or a seed's), never shared ones.
  return new Response((bytes ?? null) as BodyInit | null, {
    status: response.status,
    headers: response.headers,
  });
}
