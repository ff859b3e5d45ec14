/**
 * The one reading of `Authorization: Bearer <token>` that the mock, the suite and the proxy share, so the
 * project's proxy never fails the project's mock over a header the other reads differently.
 *
 * RFC 9110 §11.4 and RFC 6750 §2.1, read strictly: the scheme name in any case, one or more spaces (SP
 * only: the grammar is `auth-scheme 1*SP token68`, so a tab does not separate them), then a token68 (ALPHA,
 * DIGIT, `-._~+/`, then `=` padding only) and nothing after it. White space (SP or HTAB) around the whole
 * value is not part of a field value (RFC 9110 §5.5), so it is left aside, as HTTP parsers do.
 */

const SCHEME = "bearer";
const SPACE = 0x20;
const TAB = 0x09;
const EQUALS = 0x3d;

const isFieldWhiteSpace = (code: number) => code === SPACE || code === TAB;

// The token68 characters before any `=` padding, indexed by code unit.
const TOKEN68 = new Uint8Array(128);
for (const character of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/") {
  TOKEN68[character.charCodeAt(0)] = 1;
}

/**
 * The token of a well-formed Bearer credential, or undefined (no header, another scheme, no token, a
 * separator other than spaces, characters outside token68). Allocates nothing but the token: the mock
 * reads it on every request.
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  let start = 0;
  let end = authorization.length;
  while (start < end && isFieldWhiteSpace(authorization.charCodeAt(start))) start++;
  while (end > start && isFieldWhiteSpace(authorization.charCodeAt(end - 1))) end--;
  if (end - start < SCHEME.length + 2) return undefined;
  // ASCII letters only: setting bit 0x20 lower-cases a letter and cannot turn anything else into one.
  for (let index = 0; index < SCHEME.length; index++) {
    if ((authorization.charCodeAt(start + index) | 0x20) !== SCHEME.charCodeAt(index)) return undefined;
  }
  let at = start + SCHEME.length;
  if (authorization.charCodeAt(at) !== SPACE) return undefined;
  while (at < end && authorization.charCodeAt(at) === SPACE) at++;
  return isToken68Between(authorization, at, end) ? authorization.slice(at, end) : undefined;
}

/** Whether a key or token can travel as a Bearer credential at all: a token68. */
export function isToken68(text: string): boolean {
  return isToken68Between(text, 0, text.length);
}

/**
 * Why a key given to `flag` cannot be sent as `Authorization: Bearer KEY`; undefined when it can. A whole
 * credential pasted (`Bearer KEY`) is told to drop its scheme; the key itself is never repeated.
 */
export function apiKeyProblem(flag: string, key: string): string | undefined {
  if (isToken68(key)) return undefined;
  if (bearerToken(key) !== undefined)
    return `${flag} takes the key alone: drop "${key.trim().slice(0, SCHEME.length)} " before it (the key is sent as Authorization: Bearer KEY)`;
  return `${flag} must be ${TOKEN68_RULE}`;
}

/** What a usage or fixture error says a key must be, when `isToken68` refuses it. */
export const TOKEN68_RULE = "letters, digits and - . _ ~ + / (then = padding only), as a Bearer token is";

function isToken68Between(text: string, start: number, end: number): boolean {
  let at = start;
  while (at < end && TOKEN68[text.charCodeAt(at)] === 1) at++;
  if (at === start) return false;
  while (at < end && text.charCodeAt(at) === EQUALS) at++;
  return at === end;
}
