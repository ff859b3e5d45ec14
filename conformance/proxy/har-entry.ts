import { isSecretName, maskedHeaderValue, maskedPairs, maskedTarget } from "../target/credentials.ts";
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
 * headers, query and path parameters, the parameters of a form body (a bearer token as RFC 6750 §2.2
 * sends it) and the masked ones become `***`, and any secret `hide` knows in a URL, a body or any other
 * header value (the content types too) is replaced: the exchange's hider, which holds the credentials its
 * request carried, a form body's among them (read once, as the body went on).
 */
export function harEntryOf(
  source: HarSource,
  secretHeaders: ReadonlySet<string>,
  hide: (text: string) => string,
): HarEntry {
  const form = formText(source);
  const headers = (pairs: Array<[string, string]>) =>
    pairs.map(([name, value]) => {
      const masked = maskedHeaderValue(name, value, secretHeaders);
      return { name, value: masked === value ? hide(value) : masked };
    });
  const contentType = (pairs: Array<[string, string]>) =>
    hide(pairs.find(([name]) => name.toLowerCase() === "content-type")?.[1] ?? "");
  const requestType = contentType(source.requestHeaders);
  const response = source.response;
  const responseType = response ? contentType(response.headers) : "";
  const textual = TEXTUAL.test(responseType);
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
        value: isSecretName(name, secretHeaders) ? "***" : hide(value),
      })),
      ...postData(
        source,
        requestType,
        form === undefined ? undefined : maskedPairs(form, secretHeaders),
        hide,
      ),
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

/** The request body as the HAR keeps it, if any: a form's with its credential parameters masked. */
function postData(source: HarSource, mimeType: string, maskedForm: string | undefined, hide: Hide) {
  if (source.requestBody.length === 0) return {};
  return { postData: { mimeType, text: hide(maskedForm ?? source.requestBody.toString("utf8")) } };
}

type Hide = (text: string) => string;

/** Media types whose bodies the HAR keeps as text. */
const TEXTUAL = /^(text\/|application\/([\w.+-]*\+)?(json|xml)|application\/javascript)/i;

/** The request body when it is a form (`application/x-www-form-urlencoded`), as text. */
function formText(source: HarSource): string | undefined {
  const type = source.requestHeaders.find(([name]) => name.toLowerCase() === "content-type")?.[1] ?? "";
  if (source.requestBody.length === 0 || !/^\s*application\/x-www-form-urlencoded\b/i.test(type))
    return undefined;
  return source.requestBody.toString("utf8");
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
