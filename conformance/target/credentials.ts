import type { SettingNames } from "../judging/setting-names.ts";

/**
 * Credentials in every form they travel in, so that none reaches a line, a report, a HAR or an error: the
 * key and the forms a server may echo it in (Basic, base64, percent-encoded), and, in traffic the proxy
 * forwards, the headers and query parameters that carry credentials by convention or by name.
 */

/** The user of the Basic credentials the suite sends as a probe (the key as the password). */
export const BASIC_PROBE_USER = "conformance";

/** Headers whose whole value is a credential. Authorization keeps its scheme (see maskAuthorization). */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "api-key",
  "x-auth-token",
  "x-access-token",
  "x-csrf-token",
  "x-xsrf-token",
]);

/** Query parameters whose value is a credential (compared without case). */
const CREDENTIAL_PARAMETERS: ReadonlySet<string> = new Set([
  "access_token",
  "id_token",
  "refresh_token",
  "token",
  "api_key",
  "apikey",
  "api-key",
  "key",
  "auth",
  "password",
  "passwd",
  "secret",
  "client_secret",
  "signature",
  "sig",
  "x-amz-signature",
  "x-amz-credential",
  "x-amz-security-token",
]);

/** Whether a header (lower-case name) carries a credential: by convention, or named with `alsoSecret`. */
export function isCredentialHeader(lowerName: string, alsoSecret?: ReadonlySet<string>): boolean {
  return CREDENTIAL_HEADERS.has(lowerName) || alsoSecret?.has(lowerName) === true;
}

/** Whether a query parameter carries a credential, compared without case. */
export function isCredentialParameter(name: string, alsoSecret?: ReadonlySet<string>): boolean {
  const lower = name.toLowerCase();
  return CREDENTIAL_PARAMETERS.has(lower) || alsoSecret?.has(lower) === true;
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
  return isCredentialHeader(lower, alsoSecret) ? "***" : value;
}

/** A path and query with the values of credential parameters replaced by `***`. */
export function maskedTarget(target: string, alsoSecret?: ReadonlySet<string>): string {
  const queryAt = target.indexOf("?");
  if (queryAt === -1) return target;
  const query = target
    .slice(queryAt + 1)
    .split("&")
    .map((pair) => {
      const equals = pair.indexOf("=");
      if (equals === -1) return pair;
      const name = safeDecode(pair.slice(0, equals));
      return isCredentialParameter(name, alsoSecret) ? `${pair.slice(0, equals)}=***` : pair;
    })
    .join("&");
  return `${target.slice(0, queryAt)}?${query}`;
}

/**
 * The credential values one request carries, to be hidden wherever a server echoes them: every credential
 * header's value, each one of a repeated header (from the raw headers: Node keeps only the first
 * Authorization and joins others), with their parts (below), and the values of credential query parameters.
 */
export function requestSecrets(
  rawHeaders: readonly string[],
  target: string,
  alsoSecret?: ReadonlySet<string>,
): string[] {
  const found: string[] = [];
  for (let at = 0; at + 1 < rawHeaders.length; at += 2) {
    const lower = (rawHeaders[at] ?? "").toLowerCase();
    if (isCredentialHeader(lower, alsoSecret)) found.push(...headerSecrets(lower, rawHeaders[at + 1] ?? ""));
  }
  const queryAt = target.indexOf("?");
  if (queryAt !== -1) {
    for (const [name, value] of new URLSearchParams(target.slice(queryAt + 1))) {
      if (isCredentialParameter(name, alsoSecret)) found.push(value);
    }
  }
  // Too short to hide without hiding ordinary text; such a value is no secret worth the name anyway.
  return found.filter((value) => value.length >= SHORTEST_HIDDEN);
}

/**
 * A credential header's value and the parts a server may echo alone: an Authorization credential without
 * its scheme (for Basic, the decoded pair, its user and its password too), each cookie's value (a quoted
 * one also without its quotes), each item of a list separated by commas or white space. The value itself is
 * always one, however short: a configured header's is hidden whatever its length.
 */
export function headerSecrets(lowerName: string, value: string): string[] {
  const authorization = lowerName === "authorization" || lowerName === "proxy-authorization";
  // `Bearer` alone holds no credential, and hiding the word would hide it in every message.
  if (authorization && SCHEME_ONLY.test(value.trim())) return [];
  const parts = valueParts(lowerName, value);
  // A part too short to hide without hiding ordinary text is no secret worth the name.
  return [value, ...parts.filter((part) => part.length >= SHORTEST_HIDDEN && part !== value)];
}

/** The fewest characters a part of a value or a query parameter's value has to be hidden. */
const SHORTEST_HIDDEN = 4;

function valueParts(lowerName: string, value: string): string[] {
  const found: string[] = [];
  if (lowerName === "cookie") {
    for (const pair of value.split(";")) {
      const equals = pair.indexOf("=");
      if (equals === -1) continue;
      const cookie = pair.slice(equals + 1).trim();
      found.push(cookie);
      // A quoted value (RFC 6265 allows one) is usually echoed without its quotes.
      if (cookie.length >= 2 && cookie.startsWith('"') && cookie.endsWith('"'))
        found.push(cookie.slice(1, -1));
    }
    return found;
  }
  if (lowerName !== "authorization" && lowerName !== "proxy-authorization") {
    // Items of a list, each alone: separated by commas, by white space, or both.
    for (const item of value.split(",")) {
      const trimmed = item.trim();
      found.push(trimmed);
      // An auth scheme's name among them (a secret header holding `Bearer <token>`) is no secret.
      if (/\s/.test(trimmed)) found.push(...trimmed.split(/\s+/).filter((word) => !SCHEME_ONLY.test(word)));
    }
    return found;
  }
  const [scheme = "", ...rest] = value.trim().split(/\s+/);
  const credential = rest.join(" ");
  // One word: a token with no scheme, the value itself.
  if (credential === "") return found;
  found.push(credential);
  if (/^basic$/i.test(scheme)) {
    const pair = Buffer.from(credential, "base64").toString("utf8");
    const colon = pair.indexOf(":");
    found.push(pair);
    if (colon === -1) return found;
    // The user too, since some APIs take their key as the user name (the suite's probe user is no secret).
    const user = pair.slice(0, colon);
    found.push(pair.slice(colon + 1));
    if (user !== BASIC_PROBE_USER) found.push(user);
  }
  return found;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return text;
  }
}

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
