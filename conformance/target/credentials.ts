import type { SettingNames } from "../judging/setting-names.ts";

/**
 * Credentials in every form they travel in, so that none reaches a line, a report, a HAR or an error: the
 * key and the forms a server may echo it in (Basic, base64, percent-encoded), and, in traffic the proxy
 * forwards, the headers and query parameters that carry credentials by convention or by name.
 */

/** The user of the Basic credentials the suite sends as a probe (the key as the password). */
export const BASIC_PROBE_USER = "conformance";

/**
 * The one reading of a name (a header's, a query, path or form parameter's, a cookie's or a scheme
 * parameter's) that says its value is a credential: a part of it says so (`Private-Token`,
 * `X-Goog-Api-Key`, `client_secret`, `csrftoken`, `jsessionid`), or the whole name is a word that does
 * alone (`?code=`, `?key=`, `sid=`) but is a plain word inside a longer name (`X-Mock-Session`,
 * `X-Error-Code`), but for the codes OAuth and sign-in forms send (`device_code`, `user_code`, `mfa_code`);
 * OAuth's and OIDC's other names are parts (`client_assertion`, RFC 7523; `code_verifier`, RFC 7636;
 * `subject_token`, RFC 8693; `DPoP`, RFC 9449). A name that ends in a word `key` is a credential
 * (`Ocp-Apim-Subscription-Key`, `X-Functions-Key`, `DD-Application-Key`) but for the few that name no secret (`Sec-WebSocket-Key`, a
 * nonce; `Idempotency-Key`). A bracketed name (`auth[token]`) is read key by key.
 */
const SECRET_PART =
  /token|secret|passw|pwd|passphrase|passcode|apikey|api[^a-z]+key|accesskey|privatekey|credential|signature|authorization|assertion|verifier|jwt|bearer|dpop|cookie|csrf|xsrf|sessid|session[^a-z]*id|(?:device|user|auth|otp|totp|mfa|verification|recovery|backup)[^a-z]*code|[^a-z]key$/;
/** Names ending in the word `key` that hold no secret. */
const PLAIN_KEYS: ReadonlySet<string> = new Set([
  "sec-websocket-key",
  "idempotency-key",
  "x-idempotency-key",
  "cache-key",
  "x-cache-key",
]);
/** Words that name a credential only as the whole name (or a whole bracketed key). */
const SECRET_ALONE: ReadonlySet<string> = new Set([
  "key",
  "auth",
  "sig",
  "sid",
  "session",
  "code",
  "nonce",
  "cnonce",
  "pass",
  "otp",
  "totp",
]);

/** Whether a name says its value is a credential (see SECRET_PART), or is named with `alsoSecret`. */
export function isSecretName(name: string, alsoSecret?: ReadonlySet<string>): boolean {
  const lower = name.toLowerCase();
  if (alsoSecret?.has(lower) === true) return true;
  // A PHP- or Rails-style name: its base and each bracketed key.
  const keys = lower.includes("[") ? lower.split(/[[\]]+/).filter((key) => key !== "") : [lower];
  if (keys.length > 1 && keys.some((key) => alsoSecret?.has(key) === true)) return true;
  return keys.some(
    (key) =>
      (SECRET_PART.test(key) && !PLAIN_KEYS.has(key)) ||
      SECRET_ALONE.has(key.replace(/^[^a-z]+|[^a-z]+$/g, "")),
  );
}

/** An Authorization value with its credentials hidden: the scheme stays, so a report says what was sent. */
export function maskAuthorization(value: string): string {
  const [scheme = "", ...rest] = value.trim().split(/\s+/);
  if (rest.join("") !== "") return `${scheme} ***`;
  // One word: a token with no scheme, which is all credential; `Bearer` alone holds none.
  return SCHEME_ONLY.test(scheme) ? value : "***";
}

const SCHEME_ONLY = /^(bearer|basic|digest|negotiate|token)?$/i;

/** The value a report may show of a header: masked when it carries a credential. */
export function maskedHeaderValue(name: string, value: string, alsoSecret?: ReadonlySet<string>): string {
  const lower = name.toLowerCase();
  if (lower === "authorization" || lower === "proxy-authorization") return maskAuthorization(value);
  return isSecretName(lower, alsoSecret) ? "***" : value;
}

/**
 * A path and query with the values of credential parameters replaced by `***`: the query's pairs split at
 * `&` and `;`, and the `;` parameters of the path's segments (`/orders;jsessionid=…`, as Tomcat rewrites
 * URLs), each name read as decoded (`token%3D…` names `token`).
 */
export function maskedTarget(target: string, alsoSecret?: ReadonlySet<string>): string {
  const queryAt = target.indexOf("?");
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  const maskedPath = path.includes(";")
    ? path.replace(/;[^/;]*/g, (pair) => `;${maskedPair(pair.slice(1), alsoSecret)}`)
    : path;
  if (queryAt === -1) return maskedPath;
  return `${maskedPath}?${maskedPairs(target.slice(queryAt + 1), alsoSecret)}`;
}

/** Form-encoded pairs (a query, an `application/x-www-form-urlencoded` body) with credential values masked. */
export function maskedPairs(text: string, alsoSecret?: ReadonlySet<string>): string {
  return text.replace(/[^&;]+/g, (pair) => maskedPair(pair, alsoSecret));
}

function maskedPair(pair: string, alsoSecret?: ReadonlySet<string>): string {
  const split = splitPair(pair);
  if (split === undefined || !isSecretName(split.name, alsoSecret)) return pair;
  return `${pair.slice(0, split.valueAt)}***`;
}

/**
 * A `name=value` pair's decoded name and where its value starts: at the first `=`, or, with none, after
 * the first percent-encoded one (`token%3D…`, which servers that decode before splitting read as a pair).
 */
function splitPair(pair: string): { name: string; valueAt: number } | undefined {
  const equals = pair.indexOf("=");
  if (equals !== -1) return { name: nameDecoded(pair.slice(0, equals)), valueAt: equals + 1 };
  const encoded = pair.search(/%3d/i);
  if (encoded === -1) return undefined;
  return { name: nameDecoded(pair.slice(0, encoded)), valueAt: encoded + 3 };
}

/**
 * The credential values one request carries, to be hidden wherever a server echoes them: every credential
 * header's value, each one of a repeated header (from the raw headers: Node keeps only the first
 * Authorization and joins others), with their parts (below), and the values of credential parameters with
 * theirs: the query's (pairs split at `&` and `;`, as some servers do) and the path's `;` parameters.
 */
export function requestSecrets(
  rawHeaders: readonly string[],
  target: string,
  alsoSecret?: ReadonlySet<string>,
): string[] {
  const found: string[] = [];
  for (let at = 0; at + 1 < rawHeaders.length; at += 2) {
    const lower = (rawHeaders[at] ?? "").toLowerCase();
    if (isSecretName(lower, alsoSecret)) found.push(...headerSecrets(lower, rawHeaders[at + 1] ?? ""));
  }
  const queryAt = target.indexOf("?");
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  if (path.includes(";"))
    found.push(
      ...pairSecrets(
        path.split("/").flatMap((segment) => segment.split(";").slice(1)),
        alsoSecret,
      ),
    );
  if (queryAt !== -1) found.push(...pairSecrets(target.slice(queryAt + 1).split(/[&;]/), alsoSecret));
  return worthHiding(found);
}

/** The values of a form body's credential parameters (`access_token=…`, RFC 6750 §2.2), with their parts. */
export function formSecrets(text: string, alsoSecret?: ReadonlySet<string>): string[] {
  return worthHiding(pairSecrets(text.split("&"), alsoSecret));
}

/** Each value once, those too short to hide without hiding ordinary text (no secret worth the name) left out. */
function worthHiding(found: readonly string[]): string[] {
  return [...new Set(found)].filter((value) => value.length >= SHORTEST_HIDDEN);
}

/** The values of the credential pairs among `pairs`, with their parts; a value also up to a `#`. */
function pairSecrets(pairs: readonly string[], alsoSecret?: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const pair of pairs) {
    const split = splitPair(pair);
    if (split === undefined || !isSecretName(split.name, alsoSecret)) continue;
    const sent = pair.slice(split.valueAt);
    // A fragment is never the server's: what it reads, and may echo, ends before it.
    const hash = sent.indexOf("#");
    for (const raw of hash === -1 ? [sent] : [sent, sent.slice(0, hash)])
      for (const value of percentReadings(raw)) found.push(value, ...valueParts(value));
  }
  return found;
}

/**
 * The credential values a request body carries, read by what the body is rather than by its Content-Type
 * (fetch sends a JSON string as `text/plain`): a multipart form's parts by their names (a part under
 * another name read as a body of its own), and in any other text the members of JSON (any number of
 * documents, NDJSON's lines among them, a GraphQL request's variables), a GraphQL query's inline arguments
 * (`login(password: "…")`, in a JSON string too) and XML elements (`<password>…</password>`). A form
 * (`application/x-www-form-urlencoded`) is read as pairs, by its Content-Type (formSecrets). Bounded by
 * the body: each character is read a fixed number of times.
 */
export function bodySecrets(text: string, alsoSecret?: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const [start, end, json] of bodyCredentialValues(text, alsoSecret)) {
    const spelled = text.slice(start, end);
    const value = json && spelled.startsWith('"') ? jsonString(spelled) : spelled;
    found.push(value, ...valueParts(value));
  }
  return worthHiding(found);
}

/** A body with its credential values (see bodySecrets) masked: a JSON value as `"***"`, others as `***`. */
export function maskedBody(text: string, alsoSecret?: ReadonlySet<string>): string {
  const parts: string[] = [];
  let copied = 0;
  for (const [start, end, json] of bodyCredentialValues(text, alsoSecret)) {
    parts.push(text.slice(copied, start), json ? '"***"' : "***");
    copied = end;
  }
  parts.push(text.slice(copied));
  return parts.join("");
}

/** A credential value's place in a body, and whether it is a JSON value (a string with its quotes). */
type BodyValue = [start: number, end: number, json: boolean];

/** Where a body's credential values are, in order and apart (see bodySecrets). */
function bodyCredentialValues(text: string, alsoSecret?: ReadonlySet<string>): BodyValue[] {
  const boundary = MULTIPART_START.exec(text);
  if (boundary === null) return textCredentialValues(text, 0, text.length, alsoSecret);
  const delimiter = `\n--${(boundary[1] as string).trimEnd()}`;
  const found: BodyValue[] = [];
  let partAt = text.indexOf("\n", boundary.index + 2) + 1;
  while (partAt > 0 && partAt < text.length) {
    const next = text.indexOf(delimiter, partAt);
    // A part's content ends before the CRLF that begins the next delimiter; the last, cut short, at the end.
    const partEnd = next === -1 ? text.length : next - (text[next - 1] === "\r" ? 1 : 0);
    const headersEnd = text.slice(partAt, partEnd).search(/\r?\n\r?\n/);
    if (headersEnd !== -1) {
      const contentAt = text.indexOf("\n", text.indexOf("\n", partAt + headersEnd) + 1) + 1;
      const name = PART_NAME.exec(text.slice(partAt, partAt + headersEnd))?.[1];
      if (name !== undefined && isSecretName(name, alsoSecret)) {
        if (partEnd > contentAt) found.push([contentAt, partEnd, false]);
      } else found.push(...textCredentialValues(text, contentAt, partEnd, alsoSecret));
    }
    if (next === -1) break;
    partAt = text.indexOf("\n", next + 1) + 1;
  }
  return found;
}

/** A multipart body's first delimiter line (RFC 2046 §5.1.1), after any blank lines. */
const MULTIPART_START = /^(?:\r?\n)*--([!-~][ -~]{0,69})\r?\n/;
/** A part's name in its Content-Disposition header. */
const PART_NAME = /^content-disposition:[^\n]*?;\s*name="([^"\r\n]*)"/im;

/**
 * The credential values of a text that is no multipart form, between `from` and `to`: JSON members,
 * GraphQL inline arguments, XML elements; where two readings overlap, the one that starts first.
 */
function textCredentialValues(
  whole: string,
  from: number,
  to: number,
  alsoSecret?: ReadonlySet<string>,
): BodyValue[] {
  const text = from === 0 && to === whole.length ? whole : whole.slice(from, to);
  const found: BodyValue[] = [
    ...jsonCredentialValues(text, alsoSecret).map(([start, end]): BodyValue => [start, end, true]),
    ...inlineArguments(text, alsoSecret),
    ...xmlElements(text, alsoSecret),
  ].sort((a, b) => a[0] - b[0]);
  const apart: BodyValue[] = [];
  let last = -1;
  for (const [start, end, json] of found) {
    if (start < last) continue;
    apart.push([start + from, end + from, json]);
    last = end;
  }
  return apart;
}

/**
 * GraphQL's inline arguments (and JavaScript's object members) named as credentials: `name: "…"`, its
 * string also JSON-escaped inside a JSON one (`name: \\"…\\"`), or a number.
 */
function inlineArguments(text: string, alsoSecret?: ReadonlySet<string>): BodyValue[] {
  const found: BodyValue[] = [];
  for (const match of text.matchAll(INLINE_ARGUMENT)) {
    if (!isSecretName(match[1] as string, alsoSecret)) continue;
    const valueAt = (match.index as number) + match[0].length;
    if (match[2] === '\\"') {
      const end = text.indexOf('\\"', valueAt);
      found.push([valueAt, end === -1 ? text.length : end, false]);
      continue;
    }
    const end = scalarEnd(text, valueAt);
    if (end > valueAt) found.push([valueAt, end, text[valueAt] === '"']);
  }
  return found;
}

/** A name not inside a word or a JSON string's quotes, a colon, and what starts its value. */
const INLINE_ARGUMENT = /(?<![\w"$\\])([A-Za-z_]\w*)\s*:\s*(\\"|(?=["\d-]))/g;

/** XML elements named as credentials (their local name read, `ns:password` too) with text content. */
function xmlElements(text: string, alsoSecret?: ReadonlySet<string>): BodyValue[] {
  const found: BodyValue[] = [];
  if (!text.includes("</")) return found;
  for (const match of text.matchAll(XML_ELEMENT)) {
    const name = (match[1] as string).replace(/^.*:/, "");
    const content = match[2] as string;
    if (content === "" || !isSecretName(name, alsoSecret)) continue;
    const start = (match.index as number) + match[0].indexOf(">") + 1;
    found.push([start, start + content.length, false]);
  }
  return found;
}

const XML_ELEMENT = /<([A-Za-z_][\w.:-]*)(?:\s[^<>]*)?>([^<]*)<\/\1\s*>/g;

/**
 * Where the scalar values of a JSON text's credential members start and end, read in one pass: each string
 * is scanned once, so no text makes it slower than its length. Text that is no JSON is read as far as it
 * looks like it.
 */
function jsonCredentialValues(text: string, alsoSecret?: ReadonlySet<string>): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  let at = 0;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) break;
    const nameEnd = stringEnd(text, quote);
    if (nameEnd === -1) break;
    const colon = afterSpace(text, nameEnd);
    if (text[colon] !== ":") {
      at = nameEnd;
      continue;
    }
    const valueStart = afterSpace(text, colon + 1);
    at = valueStart;
    const array = text[valueStart] === "[";
    const valueEnd = array ? valueStart : scalarEnd(text, valueStart);
    if (
      (valueEnd === valueStart && !array) ||
      !isSecretName(jsonString(text.slice(quote, nameEnd)), alsoSecret)
    )
      continue;
    if (!array) {
      found.push([valueStart, valueEnd]);
      at = valueEnd;
      continue;
    }
    for (const scalar of arrayScalars(text, valueStart)) {
      found.push(scalar);
      at = scalar[1];
    }
  }
  return found;
}

/**
 * The scalars of the array opened at `open` and of arrays within it (`{"password": ["…"]}`, as PHP and
 * Rails read `password[]`), up to its end or an object in it, whose members the member scan reads.
 */
function arrayScalars(text: string, open: number): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  let depth = 0;
  for (let at = open; at < text.length; ) {
    const character = text[at] as string;
    if (character === "{") break;
    if (character === "[" || character === "]") {
      depth += character === "[" ? 1 : -1;
      at++;
      if (depth === 0) break;
      continue;
    }
    const end = character === '"' || /[-0-9]/.test(character) ? scalarEnd(text, at) : at;
    if (end > at) found.push([at, end]);
    at = Math.max(end, at + 1);
  }
  return found;
}

/** Where the JSON string opened at `quote` ends (after its closing quote); -1 when it never closes. */
function stringEnd(text: string, quote: number): number {
  for (let at = quote + 1; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x5c) at++;
    else if (code === 0x22) return at + 1;
  }
  return -1;
}

function afterSpace(text: string, at: number): number {
  let next = at;
  while (next < text.length && /\s/.test(text[next] as string)) next++;
  return next;
}

/** Where a string (to the text's end when never closed) or a number starting at `at` ends; `at` for other values. */
function scalarEnd(text: string, at: number): number {
  if (text[at] === '"') {
    const end = stringEnd(text, at);
    return end === -1 ? text.length : end;
  }
  let end = at;
  while (end < text.length && /[-0-9.eE+]/.test(text[end] as string)) end++;
  return end;
}

/** A JSON string (quotes included; a string cut short lacks its closing one) read; as written when it does not read. */
function jsonString(spelled: string): string {
  const closed = spelled.length > 1 && stringEnd(spelled, 0) === spelled.length ? spelled : `${spelled}"`;
  try {
    return JSON.parse(closed) as string;
  } catch {
    return spelled.slice(1, closed === spelled ? -1 : undefined);
  }
}

/**
 * A credential header's value and every part of it a server may echo alone (see valueParts); for
 * Authorization, the credential after the scheme too, and for Basic, the decoded pair, its password and its
 * user, decoded as UTF-8 and as Latin-1. The value itself is always one, however short: a configured
 * header's is hidden whatever its length.
 */
export function headerSecrets(lowerName: string, value: string): readonly string[] {
  const key = `${lowerName}:${value}`;
  const known = recentHeaderSecrets.get(key);
  if (known !== undefined) return known;
  const secrets = headerSecretsOf(lowerName, value);
  // The least recently made goes first: clients send the same few credentials again and again.
  if (recentHeaderSecrets.size >= HEADER_SECRETS_KEPT)
    recentHeaderSecrets.delete(recentHeaderSecrets.keys().next().value as string);
  recentHeaderSecrets.set(key, secrets);
  return secrets;
}

/**
 * The parts of the last credential headers seen, by name and value: splitting one costs a proxy several
 * microseconds on every exchange, and the parts depend on the text alone.
 */
const recentHeaderSecrets = new Map<string, readonly string[]>();
const HEADER_SECRETS_KEPT = 64;

function headerSecretsOf(lowerName: string, value: string): readonly string[] {
  const authorization = lowerName === "authorization" || lowerName === "proxy-authorization";
  // `Bearer` alone holds no credential, and hiding the word would hide it in every message.
  if (authorization && SCHEME_ONLY.test(value.trim())) return [];
  // An Authorization's scheme (`AWS4-HMAC-SHA256`, `Digest`) names no secret: the parts are its credential's.
  const credential = authorization ? value.trim().replace(/^\S+\s+/, "") : value;
  const parts = [
    ...valueParts(credential, 0, authorization),
    ...(authorization ? authorizationParts(value) : []),
  ];
  // A part too short to hide without hiding ordinary text is no secret worth the name.
  return [value, ...new Set(parts.filter((part) => part.length >= SHORTEST_HIDDEN && part !== value))];
}

/** The fewest characters a part of a value or a query parameter's value has to be hidden. */
const SHORTEST_HIDDEN = 4;

/**
 * Closed quoted strings (kept whole, with their escapes, after a parameter's name if any) and the runs of
 * characters between separators (white space, `,`, `;`, quotes).
 */
const WORDS = /(?:[^\s,;"'=]+=+)?"(?:[^"\\]|\\.)*"|[^\s,;"']+/gs;
/** A word `name=value`: the name is a parameter's (`Signature`, a cookie's), no secret; not `TOKEN==`. */
const NAMED = /^([^=]+)=(?!=*$)(.*)$/s;

/**
 * Every part of a credential value a server may echo alone, by construction rather than by scheme: the
 * value split at each separator any scheme uses (commas, `;`, white space, quotes, `=` after a parameter's
 * name), each list item and each word; a quoted one with and without its quotes; a base64 one with and
 * without its `=` padding; one holding `%XX` also percent-decoded, and that split again. Scheme names and
 * parameter names are left out, so that the words of every message are not hidden.
 */
function valueParts(sent: string, depth = 0, schemeParameters = false): string[] {
  const value = schemeParameters ? sent.replace(PLAIN_PARAMETER_WORDS, "") : sent;
  // Items of more than one word: one word is a word's part below.
  const found = value
    .split(/[,;]/)
    .map((item) => item.trim())
    .filter((item) => /\s/.test(item));
  // The words between white space too, as sent: a quote or `=` in a token is the token's own. Inside a
  // quoted or decoded value, `:` separates too (a signed cookie's `s:`, a pair). A `name=value` is its
  // value's, below.
  for (const word of value.split(depth > 0 ? /[\s,;:]+/ : /[\s,;]+/))
    if (!SCHEME_ONLY.test(word) && !NAMED.test(word)) found.push(word, word.replace(/=+$/, ""));
  for (const word of value.match(WORDS) ?? []) found.push(...wordParts(word, depth, schemeParameters));
  return found.flatMap(normalForms).filter((part) => part.length >= SHORTEST_HIDDEN);
}

/** A word's value (after its parameter's name), unquoted, without padding, decoded, and split again. */
function wordParts(word: string, depth: number, schemeParameters: boolean): string[] {
  const named = NAMED.exec(word);
  const part = named ? (named[2] ?? "") : word;
  if (!named && SCHEME_ONLY.test(part)) return [];
  if (named && !secretParameter(named[1] ?? "", part, schemeParameters)) return [];
  const found = [part, part.replace(/=+$/, "")];
  // Deep enough for a quoted list holding encoded values; a value nested deeper is hidden whole.
  if (depth >= 2) return found;
  if (part.length >= 2 && part.startsWith('"') && part.endsWith('"')) {
    const unquoted = part.slice(1, -1).replace(/\\(.)/gs, "$1");
    found.push(unquoted, ...valueParts(unquoted, depth + 1));
  }
  // A value that is itself `name=value` (a parameter glued to the one before): its value is a part too.
  if (named && NAMED.test(part)) found.push(...valueParts(part, depth + 1));
  if (!/%[0-9a-f]{2}/i.test(part)) return found;
  for (const decoded of percentReadings(part, false))
    if (decoded !== part) found.push(decoded, ...valueParts(decoded, depth + 1));
  return found;
}

/**
 * Parameters an Authorization scheme names whose values are no secret (Digest's path and counters, SigV4's
 * header list): hiding them would blank paths, ids and common words in every report of the exchange. Only
 * there: in any other header (a Cookie, an API key) such a name is the sender's own, and its value may be
 * the secret.
 */
const PLAIN_PARAMETERS = new Set(["uri", "realm", "qop", "nc", "algorithm", "signedheaders"]);
/**
 * A plain parameter with its value (quoted, or up to the next separator), left out before splitting. What
 * follows a `;` is never the plain value's: a secret glued on after one stays a part of its own.
 */
const PLAIN_PARAMETER_WORDS = new RegExp(
  [
    "(?<![^\\s,;])(?:",
    // SigV4's list of header names, each a name alone: never one followed by `=`.
    "signedheaders=(?![\\w-]*=)[\\w-]+(?:;(?![\\w-]*=)[\\w-]+)*(?![\\w=-])",
    `|(?:${[...PLAIN_PARAMETERS].filter((name) => name !== "signedheaders").join("|")})=`,
    '(?:"(?:[^"\\\\]|\\\\.)*"|[^\\s,;=]*(?![^\\s,;]))',
    ")",
  ].join(""),
  "gi",
);
/**
 * Parameters of an Authorization scheme whose values are secret whatever their length: Digest's user
 * (some APIs take their key there) and its response, the proof of the password.
 */
const SECRET_SCHEME_PARAMETERS = new Set(["username", "response"]);
/** A value this long is hidden whatever its parameter's name (a session id, a signature). */
const LONG_VALUE = 8;

/**
 * Whether a `name=value` word's value is hidden: not a plain parameter of an Authorization scheme's, and
 * secret by its name or length.
 */
function secretParameter(name: string, value: string, schemeParameters: boolean): boolean {
  const bare = name.trim().toLowerCase();
  // A plain parameter's value holds no `=`: one that does has more glued on, which may be a secret.
  if (schemeParameters && PLAIN_PARAMETERS.has(bare) && !value.includes("=")) return false;
  if (schemeParameters && SECRET_SCHEME_PARAMETERS.has(bare)) return true;
  return isSecretName(bare) || value.replace(/^"|"$/g, "").length >= LONG_VALUE;
}

/** A part as written, and in Unicode's composed and decomposed forms (an echo may normalize it). */
function normalForms(part: string): string[] {
  // Only text past ASCII has other forms.
  if (/^[\p{ASCII}]*$/u.test(part)) return [part];
  return [...new Set([part, part.normalize("NFC"), part.normalize("NFD")])];
}

/**
 * The parts of an Authorization value its scheme gives: the credential after the scheme (its first word,
 * when more follows), and for Basic the decoded pair, its password and its user (the suite's probe user
 * is no secret), decoded as UTF-8 and as Latin-1 (clients differ).
 */
function authorizationParts(value: string): string[] {
  const [scheme = "", ...rest] = value.trim().split(/\s+/);
  const credential = rest.join(" ");
  // One word: a token with no scheme, the value itself.
  if (credential === "") return [];
  const found = [credential];
  if (!/^basic$/i.test(scheme)) return found;
  for (const encoding of ["utf8", "latin1"] as const) {
    const pair = Buffer.from(credential, "base64").toString(encoding);
    const colon = pair.indexOf(":");
    found.push(pair);
    if (colon === -1) continue;
    // The user too, since some APIs take their key as the user name.
    const user = pair.slice(0, colon);
    found.push(pair.slice(colon + 1));
    if (user !== BASIC_PROBE_USER) found.push(user);
  }
  return found.flatMap(normalForms);
}

/**
 * Every reading of a percent-encoded value a server may take and echo: the value as sent, decoded and its
 * bytes read as Latin-1 (as a binary body shows them); when it does not decode (`%zz`, a lone `%`, bytes
 * that are no UTF-8: `%E9`, an overlong `%C0%AF`, a cut `%C3`), as lenient decoders read it: WHATWG's
 * (URLSearchParams, Node's querystring: an escape that is none kept, bytes that are no UTF-8 as U+FFFD, as
 * a body read as UTF-8 shows them raw) and each UTF-8 sequence decoded with the other escapes kept.
 */
export function percentReadings(text: string, plusIsSpace = true): string[] {
  const spaced = plusIsSpace ? text.replaceAll("+", " ") : text;
  let decoded: string | undefined;
  try {
    decoded = decodeURIComponent(spaced);
  } catch {
    // Read leniently, below.
  }
  if (decoded === text) return [text];
  const bytes = percentDecodedBytes(spaced);
  const lenient = decoded === undefined ? [bytes.toString("utf8"), sequencesDecoded(spaced)] : [decoded];
  return [...new Set([...lenient, text, bytes.toString("latin1")])];
}

/** A name as a server reads it: decoded, or as WHATWG's decoder reads it when it does not decode. */
function nameDecoded(text: string): string {
  const spaced = text.replaceAll("+", " ");
  try {
    return decodeURIComponent(spaced);
  } catch {
    return percentDecodedBytes(spaced).toString("utf8");
  }
}

/** The text's UTF-8 bytes with each `%XX` (two hex digits) made the byte it names; any other `%` kept. */
function percentDecodedBytes(text: string): Buffer {
  const source = Buffer.from(text);
  const bytes = Buffer.alloc(source.length);
  let length = 0;
  for (let at = 0; at < source.length; at++) {
    const byte = source[at] as number;
    const high = hexValue(source[at + 1]);
    const low = hexValue(source[at + 2]);
    if (byte === PERCENT && high !== -1 && low !== -1) {
      bytes[length++] = high * 16 + low;
      at += 2;
    } else bytes[length++] = byte;
  }
  return bytes.subarray(0, length);
}

const PERCENT = 0x25;

function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/** Each run of escapes with its UTF-8 sequences decoded, and each escape that starts none kept as written. */
function sequencesDecoded(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    const bytes = percentDecodedBytes(run);
    let decoded = "";
    for (let at = 0; at < bytes.length; ) {
      const length = utf8SequenceLength(bytes, at);
      if (length === 0) {
        decoded += run.slice(at * 3, at * 3 + 3);
        at++;
      } else {
        decoded += bytes.toString("utf8", at, at + length);
        at += length;
      }
    }
    return decoded;
  });
}

/** The length of the well-formed UTF-8 sequence starting at `at` (RFC 3629: no overlong form, no surrogate); 0 if none. */
function utf8SequenceLength(bytes: Buffer, at: number): number {
  const first = bytes[at] as number;
  if (first < 0x80) return 1;
  const lead = UTF8_LEADS.find(([from, to]) => first >= from && first <= to);
  if (lead === undefined) return 0;
  const [, , length, low, high] = lead;
  if (at + length > bytes.length) return 0;
  const second = bytes[at + 1] as number;
  if (second < low || second > high) return 0;
  for (let next = at + 2; next < at + length; next++) if (((bytes[next] as number) & 0xc0) !== 0x80) return 0;
  return length;
}

/** UTF-8's lead bytes: [from, to, the sequence's length, the range of its second byte]. */
const UTF8_LEADS: ReadonlyArray<readonly [number, number, number, number, number]> = [
  [0xc2, 0xdf, 2, 0x80, 0xbf],
  [0xe0, 0xe0, 3, 0xa0, 0xbf],
  [0xe1, 0xec, 3, 0x80, 0xbf],
  [0xed, 0xed, 3, 0x80, 0x9f],
  [0xee, 0xef, 3, 0x80, 0xbf],
  [0xf0, 0xf0, 4, 0x90, 0xbf],
  [0xf1, 0xf3, 4, 0x80, 0xbf],
  [0xf4, 0xf4, 4, 0x80, 0x8f],
];

/** A URL as given, with any `user:password@` hidden: for messages about a URL that may hold them. */
export function hideUrlCredentials(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1***@").replace(/([?#]).*$/s, "$1***");
}

/**
 * Credentials in a target's URL, before its host or in its query, are never sent (the API takes its key as
 * a bearer token, a gateway what --header gives it), so a URL holding them is refused rather than silently
 * stripped and printed; the query and fragment are never shown, since which parameter is a key is unknowable.
 */
export function credentialsInUrl(url: URL, names: SettingNames, text: string): string | undefined {
  const where =
    url.username || url.password
      ? "holds credentials"
      : url.search || url.hash || /[?#]/.test(text)
        ? "has a query or fragment (where keys such as ?api_key= are often put)"
        : undefined;
  if (where === undefined) return undefined;
  return `${names.target} ${where} (${hideUrlCredentials(text)}), which are never sent: the API key goes in ${names.apiKey}, and what a gateway needs in ${names.headers}`;
}
