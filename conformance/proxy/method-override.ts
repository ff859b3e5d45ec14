import type { IncomingHttpHeaders } from "node:http";

/**
 * Method overrides: many servers take a method named in a header or a `_method` parameter as the
 * request's own (Rails' and Laravel's `_method`, Express's method-override, Symfony, the
 * X-HTTP-Method-Override of APIs behind proxies that pass only GET and POST), so a request that carries one
 * may have been served as that method. The proxy reads them conservatively: as the request it is and as
 * each method named, whichever the upstream followed.
 */

/** The header names, as servers compare them: lower case, `_` read as `-` (WSGI and CGI servers do). */
const OVERRIDE_HEADERS: ReadonlySet<string> = new Set([
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
]);

/** A method as RFC 9110 spells one (a token), short enough to show; anything else is named by this. */
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Z-]{1,16}$/;
export const UNREADABLE_METHOD = "an unreadable method";

const NONE: readonly string[] = [];

/**
 * The methods, upper-cased, that the request's method-override headers and `_method` query parameters
 * name other than its own: none for almost every request. A `_method` field of a form body is not read
 * here: servers read it of a POST alone, and the contract has no POST, so such a request is a write
 * outside the contract whatever its body says.
 */
export function methodOverrides(
  headers: IncomingHttpHeaders,
  method: string,
  target: string,
): readonly string[] {
  const named: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && OVERRIDE_HEADERS.has(name.toLowerCase().replaceAll("_", "-")))
      named.push(...String(value).split(","));
  }
  const queryAt = target.indexOf("?");
  // Every name decoded, as the server reads it: no test of the raw text can tell an encoding of `_method`.
  if (queryAt !== -1)
    for (const [name, value] of new URLSearchParams(target.slice(queryAt + 1)))
      if (namesMethodParameter(name)) named.push(value);
  if (named.length === 0) return NONE;
  const own = method.toUpperCase();
  const methods = new Set<string>();
  for (const text of named) {
    const upper = text.trim().toUpperCase();
    if (upper === "" || upper === own) continue;
    methods.add(METHOD.test(upper) ? upper : UNREADABLE_METHOD);
  }
  return methods.size === 0 ? NONE : [...methods];
}

/**
 * A decoded query name some server reads as `_method`: PHP drops leading spaces and makes spaces, dots and
 * an open bracket underscores (`.method`, `+_method`); the case is kept by some, so it is read in any.
 */
function namesMethodParameter(name: string): boolean {
  return name.trimStart().replace(/[ .[]/g, "_").toLowerCase() === "_method";
}
