import { isCredentialParameter, maskedHeaderValue, maskedTarget } from "../target/credentials.ts";
import type { HarEntry } from "./har-writer.ts";

/** What the HAR keeps of one exchange; headers as [name, value] pairs in the order they came. */
export interface HarSource {
  startedAt: number;
  durationMs: number;
  waitMs: number;
  method: string;
  url: URL;
  requestHeaders: Array<[string, string]>;
  requestBody: Buffer;
  response?: {
    status: number;
    statusText: string;
    headers: Array<[string, string]>;
    /** Decoded from any Content-Encoding. */
    body: Buffer;
    /** Bytes on the wire. */
    size: number;
  };
  comment?: string;
}

/**
 * An exchange as a HAR entry with every credential hidden: Authorization keeps its scheme, credential
 * headers and query parameters and the masked ones become `***`, and any known secret in a URL, a body or
 * any other header value (the content types too) is replaced.
 */
export function harEntryOf(
  source: HarSource,
  secretHeaders: ReadonlySet<string>,
  hide: (text: string) => string,
): HarEntry {
  const headers = (pairs: Array<[string, string]>) =>
    pairs.map(([name, value]) => {
      const masked = maskedHeaderValue(name, value, secretHeaders);
      return { name, value: masked === value ? hide(value) : masked };
    });
  const contentType = (pairs: Array<[string, string]>) =>
    hide(pairs.find(([name]) => name.toLowerCase() === "content-type")?.[1] ?? "");
  const response = source.response;
  const responseType = response ? contentType(response.headers) : "";
  const textual = /^(text\/|application\/([\w.+-]*\+)?(json|xml)|application\/javascript)/i.test(
    responseType,
  );
  return {
    startedDateTime: new Date(source.startedAt).toISOString(),
    time: round(source.durationMs),
    request: {
      method: source.method,
      url: hide(
        `${source.url.origin}${maskedTarget(source.url.pathname + source.url.search, secretHeaders)}`,
      ),
      httpVersion: "HTTP/1.1",
      cookies: [],
      headers: headers(source.requestHeaders),
      queryString: [...source.url.searchParams].map(([name, value]) => ({
        name,
        value: isCredentialParameter(name, secretHeaders) ? "***" : hide(value),
      })),
      ...(source.requestBody.length > 0
        ? {
            postData: {
              mimeType: contentType(source.requestHeaders),
              text: hide(source.requestBody.toString("utf8")),
            },
          }
        : {}),
      headersSize: -1,
      bodySize: source.requestBody.length,
    },
    response: {
      status: response?.status ?? 0,
      statusText: response?.statusText ?? "",
      httpVersion: "HTTP/1.1",
      cookies: [],
      headers: headers(response?.headers ?? []),
      content: {
        size: response?.body.length ?? 0,
        mimeType: responseType,
        ...(response && response.body.length > 0
          ? textual
            ? { text: hide(response.body.toString("utf8")) }
            : {
                // Hidden in the bytes before encoding: a secret echoed in a binary body is ASCII there too.
                text: Buffer.from(hide(response.body.toString("latin1")), "latin1").toString("base64"),
                encoding: "base64" as const,
              }
          : {}),
      },
      redirectURL: "",
      headersSize: -1,
      bodySize: response?.size ?? 0,
    },
    cache: {},
    timings: {
      send: 0,
      wait: round(source.waitMs),
      receive: round(Math.max(source.durationMs - source.waitMs, 0)),
    },
    ...(source.comment ? { comment: hide(source.comment) } : {}),
  };
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
