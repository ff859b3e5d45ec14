import {
  isSecretName,
  maskedBody,
  maskedHeaderValue,
  maskedPairs,
  maskedTarget,
} from "../target/credentials.ts";
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
    /** Only the body's start is kept. */
    cut?: boolean;
  };
  /** Only the request body's start is kept. */
  requestBodyCut?: boolean;
  comment?: string;
}

/**
 * An exchange as a HAR entry with every credential hidden: Authorization keeps its scheme, credential
 * headers, query and path parameters, the parameters of a form body (a bearer token as RFC 6750 §2.2
 * sends it), the credential values of any other body (JSON members, multipart parts, NDJSON, GraphQL, XML:
 * see bodySecrets) and the masked ones become `***`; then every text of the
 * entry (names, values, the URL, the reason phrase, the bodies, the comment) goes through `hide`, the
 * exchange's hider, which holds the credentials its request carried, a form body's among them. A body
 * cut short loses its last characters within the hider's reach of the cut: the start of a secret there
 * matches no form.
 */
export function harEntryOf(
  source: HarSource,
  secretHeaders: ReadonlySet<string>,
  hide: Hide & { readonly reach?: number },
): HarEntry {
  const entry = hiddenTexts(shownEntry(source, secretHeaders, hide.reach), hide);
  const { content } = entry.response;
  // A binary body's bytes were hidden as Latin-1 text: a secret echoed in it is ASCII there too.
  if (content.encoding === "base64" && content.text !== undefined)
    content.text = Buffer.from(content.text, "latin1").toString("base64");
  return entry;
}

/** The entry with its credentials masked by name and its cut bodies trimmed, before any secret is hidden. */
function shownEntry(
  source: HarSource,
  secretHeaders: ReadonlySet<string>,
  reach: number | undefined,
): HarEntry {
  const headers = (pairs: Array<[string, string]>) =>
    pairs.map(([name, value]) => ({ name, value: maskedHeaderValue(name, value, secretHeaders) }));
  const contentType = (pairs: Array<[string, string]>) =>
    pairs.find(([name]) => name.toLowerCase() === "content-type")?.[1] ?? "";
  const requestType = contentType(source.requestHeaders);
  const response = source.response;
  const responseType = response ? contentType(response.headers) : "";
  const trimmed = [source.requestBodyCut, response?.cut].some(Boolean);
  return {
    startedDateTime: new Date(source.startedAt).toISOString(),
    time: round(source.durationMs),
    request: {
      method: source.method,
      url: `${source.url.origin}${maskedTarget(source.url.pathname + source.url.search, secretHeaders)}`,
      httpVersion: "HTTP/1.1",
      cookies: [],
      headers: headers(source.requestHeaders),
      queryString: [...source.url.searchParams].map(([name, value]) => ({
        name,
        value: isSecretName(name, secretHeaders) ? "***" : value,
      })),
      ...postData(source, requestType, secretHeaders, reach),
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
        ...(response && response.body.length > 0 ? responseContent(response, responseType, reach) : {}),
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
    ...(source.comment || trimmed ? { comment: withTrimSaid(source.comment, trimmed) } : {}),
  };
}

function withTrimSaid(comment: string | undefined, trimmed: boolean): string {
  if (!trimmed) return comment ?? "";
  const said = "a body cut short ends before the cut by as much as a secret may span, hidden or not";
  return comment ? `${comment}; ${said}` : said;
}

/** The response body as text: as is when textual, else its bytes as Latin-1 (encoded once hidden). */
function responseContent(response: NonNullable<HarSource["response"]>, mimeType: string, reach?: number) {
  const textual = TEXTUAL.test(mimeType);
  const text = response.body.toString(textual ? "utf8" : "latin1");
  const kept = response.cut ? beforeCut(text, reach) : text;
  return textual ? { text: kept } : { text: kept, encoding: "base64" as const };
}

/**
 * A text cut short without its last `reach - 1` characters, where the start of a secret may lie that no
 * form matches; all of it when the reach is unknown.
 */
function beforeCut(text: string, reach: number | undefined): string {
  if (reach === undefined) return "";
  return text.slice(0, Math.max(0, text.length - Math.max(0, reach - 1)));
}

/** The request body as the HAR keeps it, if any: a form's credential pairs or another body's credential values masked. */
function postData(
  source: HarSource,
  mimeType: string,
  secretHeaders: ReadonlySet<string>,
  reach: number | undefined,
) {
  if (source.requestBody.length === 0) return {};
  const body = source.requestBody.toString("utf8");
  // Any other body is read by what it is, whatever its Content-Type says (see bodySecrets).
  const text = FORM.test(mimeType) ? maskedPairs(body, secretHeaders) : maskedBody(body, secretHeaders);
  return { postData: { mimeType, text: source.requestBodyCut ? beforeCut(text, reach) : text } };
}

/** Every text of the entry hidden, in one walk: no field is left out because it was not thought of. */
function hiddenTexts<Value>(value: Value, hide: Hide): Value {
  if (typeof value === "string") return hide(value) as Value;
  if (Array.isArray(value)) return value.map((item) => hiddenTexts(item, hide)) as Value;
  if (typeof value !== "object" || value === null) return value;
  const hidden: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) hidden[key] = hiddenTexts(item, hide);
  return hidden as Value;
}

type Hide = (text: string) => string;

/** Media types whose bodies the HAR keeps as text. */
const TEXTUAL = /^(text\/|application\/([\w.+-]*\+)?(json|xml)|application\/javascript)/i;

const FORM = /^\s*application\/x-www-form-urlencoded\b/i;

const round = (ms: number) => Math.round(ms * 1000) / 1000;
