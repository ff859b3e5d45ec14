import type { IncomingHttpHeaders } from "node:http";

/**
 * Method overrides: many servers take a method named in a header or a `_method` parameter as the
 * request's own (Rails' and Laravel's `_method`, Express's method-override, Symfony, the
 * X-HTTP-Method-Override of APIs behind proxies that pass only GET and POST), so a request that carries one
 * may have been served as that method. The proxy reads them conservatively: as the request it is and as
 * each method named, whichever the upstream followed.
 */

const OVERRIDE_HEADERS = ["x-http-method-override", "x-http-method", "x-method-override"] as const;

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
  const queryAt = target.indexOf("?");
  // `_method` or an encoding of it: the parameters are parsed only when one may be there.
  const inQuery = queryAt !== -1 && /method/i.test(target.slice(queryAt));
  if (!inQuery && OVERRIDE_HEADERS.every((name) => headers[name] === undefined)) return NONE;
  const named: string[] = [];
  for (const name of OVERRIDE_HEADERS) {
    const value = headers[name];
    if (value !== undefined) named.push(...String(value).split(","));
  }
  if (inQuery) named.push(...new URLSearchParams(target.slice(queryAt + 1)).getAll("_method"));
  const own = method.toUpperCase();
  const methods = new Set<string>();
  for (const text of named) {
    const upper = text.trim().toUpperCase();
    if (upper === "" || upper === own) continue;
    methods.add(METHOD.test(upper) ? upper : UNREADABLE_METHOD);
  }
  return methods.size === 0 ? NONE : [...methods];
}
