/** Headers a browser needs to call the mock from another origin; simple requests' are constant. */
export interface CorsPolicy {
  /** Headers for an answer to a request from this origin; the same object every time where it can be. */
  headersFor(origin: string | undefined): Readonly<Record<string, string>>;
  /** Headers of the answer to a preflight. */
  preflightHeaders(origin: string | undefined): Record<string, string>;
  /**
   * The same for the control API, which answers a page of another origin only when --cors-origin names it:
   * never `*`, since a page that can steer the mock can change what every other client sees.
   */
  controlHeadersFor(origin: string | undefined): Readonly<Record<string, string>>;
  controlPreflightHeaders(origin: string | undefined): Record<string, string>;
  /** Whether a page of this origin may use the control API (named by --cors-origin). */
  controlAllows(origin: string): boolean;
}

// Bearer keys travel in a header, never in cookies, so `*` is safe and credentials are not needed.
const ALLOWED_METHODS = "GET, HEAD, DELETE, PUT, POST";
const ALLOWED_HEADERS = "Authorization, Content-Type, X-Mock-Session, Prefer";
const EXPOSED_HEADERS = "WWW-Authenticate, Allow";
const PREFLIGHT_MAX_AGE_SECONDS = "600";

export function createCorsPolicy(origins: readonly string[] | "*"): CorsPolicy {
  const preflight = {
    "access-control-allow-methods": ALLOWED_METHODS,
    "access-control-allow-headers": ALLOWED_HEADERS,
    "access-control-max-age": PREFLIGHT_MAX_AGE_SECONDS,
  };
  if (origins === "*") {
    const simple = Object.freeze({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": EXPOSED_HEADERS,
    });
    const none = Object.freeze({});
    return {
      headersFor: () => simple,
      preflightHeaders: () => ({ ...simple, ...preflight }),
      controlHeadersFor: () => none,
      controlPreflightHeaders: () => ({}),
      controlAllows: () => false,
    };
  }
  const allowed = new Set(origins);
  const refused = Object.freeze({ vary: "Origin" });
  const headersFor = (origin: string | undefined) =>
    origin !== undefined && allowed.has(origin)
      ? {
          "access-control-allow-origin": origin,
          "access-control-expose-headers": EXPOSED_HEADERS,
          vary: "Origin",
        }
      : refused;
  return {
    headersFor,
    preflightHeaders: (origin) => ({ ...headersFor(origin), ...preflight }),
    controlHeadersFor: headersFor,
    controlPreflightHeaders: (origin) => ({ ...headersFor(origin), ...preflight }),
    controlAllows: (origin) => allowed.has(origin),
  };
}
