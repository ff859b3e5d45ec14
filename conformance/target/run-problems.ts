import type { Exchange } from "../judging/exchange.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { ProxyChoice } from "./proxy-env.ts";

// Node's codes for a certificate the client does not trust (OpenSSL's verify errors, and the name check).
const UNTRUSTED_CERTIFICATE = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
]);
const UNRESOLVED = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME"]);
const UNREACHABLE = new Set(["EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ETIMEDOUT"]);

/**
 * What keeps the run from judging the target at all, as one line that says how to fix it; undefined when
 * the first exchange reached the target. These are errors of the run (exit 2), not deviations (exit 1).
 * `names`: how the caller names its settings (the suite's --base-url, the proxy's --upstream, a library's option).
 */
export function runProblem(
  exchange: Exchange,
  target: URL,
  route: ProxyChoice,
  names: SettingNames,
): string | undefined {
  const targetOption = names.target;
  const host = target.host;
  const proxy = route.proxy ? `the proxy ${redactProxy(route.proxy)} (from ${route.source})` : undefined;
  if (exchange.proxyRefused !== undefined) {
    return `${proxy} refused the tunnel to ${host} with ${exchange.proxyRefused}: check its address and credentials, or list ${target.hostname} in NO_PROXY`;
  }
  const status = exchange.response?.status;
  if (route.proxy && status === 407) {
    return `${proxy} asks for credentials (407): give them in its URL, http://user:password@host:port`;
  }
  if (status !== undefined && status >= 300 && status < 400) {
    const location = exchange.response?.headers.location;
    if (location) {
      const suggestion = new URL(location, new URL(exchange.request.path, target)).href.replace(
        /\/store\/orders\/?(\?.*)?$/,
        "",
      );
      return `the base address redirects (${status}) to ${location}: use ${targetOption} ${suggestion}`;
    }
    return `the base address redirects (${status}) without a Location: check ${targetOption}`;
  }
  const code = exchange.errorCode;
  if (code === undefined) return undefined;
  if (UNTRUSTED_CERTIFICATE.has(code)) {
    return `the certificate of ${host} is not trusted (${code}): pass ${names.caFile} with the PEM of the CA that issued it (or set NODE_EXTRA_CA_CERTS), or ${names.insecure} to skip the check`;
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return `the certificate of ${host} is not issued for that name (${code}): use a name it covers in ${targetOption}, or ${names.insecure} to skip the check`;
  }
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID") {
    return `the certificate of ${host} is not valid now (${code}): renew it, or ${names.insecure} to skip the check`;
  }
  if (code === "ECONNREFUSED") {
    return proxy
      ? `${proxy} refused the connection (ECONNREFUSED): check its address, or unset ${route.source}`
      : `nothing accepts connections at ${host} (ECONNREFUSED): is the service running, and is ${targetOption} right?`;
  }
  if (UNRESOLVED.has(code)) {
    return proxy
      ? `the name of ${proxy} does not resolve (${code}): check ${route.source}`
      : `the name ${target.hostname} does not resolve (${code}): check ${targetOption}, or set https_proxy if it is reached through a proxy`;
  }
  if (UNREACHABLE.has(code))
    return `${host} cannot be reached (${code}): check ${targetOption} and the network`;
  if (code.startsWith("ERR_SSL") || code.startsWith("EPROTO")) {
    return `no TLS handshake with ${host} (${code}): is it an http:// address, or does it want ${names.certAndKey}?`;
  }
  return `cannot reach ${target.href} (${exchange.error})`;
}

/** What Node's fetch gives as the cause of "fetch failed": the socket's error, or several at once. */
interface FetchFailure {
  code?: string;
  message?: string;
  address?: string;
  port?: number;
  errors?: FetchFailure[];
}

/**
 * A hook's request that reached nothing (Node's fetch: "fetch failed"), said as runProblem says it for the
 * run's own, naming the address it tried; undefined for any other failure. `target`: the address the hook
 * was given. A hook's fetch goes through no proxy.
 */
export function hookUnreached(error: unknown, target: URL, names: SettingNames): string | undefined {
  const cause = (error as { cause?: FetchFailure } | undefined)?.cause;
  const failure = cause?.code !== undefined ? cause : cause?.errors?.find((each) => each.code !== undefined);
  if (failure?.code === undefined) return undefined;
  const tried = new URL(target.href);
  if (failure.address !== undefined && failure.port !== undefined) {
    tried.hostname = failure.address.includes(":") ? `[${failure.address}]` : failure.address;
    tried.port = String(failure.port);
  }
  const exchange: Exchange = {
    request: { method: "GET", path: tried.pathname, headers: {} },
    errorCode: failure.code,
    error: failure.message ?? failure.code,
  };
  return runProblem(exchange, tried, {}, names);
}

/**
 * The target refused the run's key: the list read with it first was answered 401, so every check would
 * be that one refusal seen again. Nothing of the server's answer is repeated, since it may echo the key.
 */
export function keyRefused(exchange: Exchange, target: URL, names: SettingNames): string | undefined {
  if (exchange.response?.status !== 401) return undefined;
  return `the target refused the API key: ${exchange.request.method} ${new URL(exchange.request.path, target).href} with it was answered 401. Check that ${names.apiKey} holds a key this deployment accepts and that it has not expired or been revoked; nothing was judged`;
}

/**
 * The target is not serving: the first list was answered 502, 503 or 504, as a gateway with no backend or
 * a service whose store is down answers. Judging it would report every check as the deployment's
 * deviation; the run is stopped instead, saying so.
 */
export function targetUnavailable(exchange: Exchange, target: URL): string | undefined {
  const status = exchange.response?.status;
  if (status !== 502 && status !== 503 && status !== 504) return undefined;
  const retryAfter = exchange.response?.headers["retry-after"];
  return `the target is not serving: ${exchange.request.method} ${new URL(exchange.request.path, target).href} was answered ${status}${typeof retryAfter === "string" && /^\d{1,6}$/.test(retryAfter) ? ` (Retry-After: ${retryAfter} s)` : ""}, as a gateway with no backend or a service whose own store is down answers. Run again once it serves; nothing was judged`;
}

/** A proxy URL for messages, without its credentials. */
export function redactProxy(proxy: URL): string {
  if (!proxy.username && !proxy.password) return proxy.origin;
  return `${proxy.protocol}//***@${proxy.host}`;
}
