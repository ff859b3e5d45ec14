/** Where a request to the target goes: straight there, or through a proxy (and why). */
export interface ProxyChoice {
  proxy?: URL;
  /** Which option or variable chose the proxy, for messages. */
  source?: string;
}

/**
 * The proxy for a URL, read from the environment as curl reads it: `http_proxy` (lower case only: the
 * upper-case HTTP_PROXY can be set by a CGI request's `Proxy:` header, so curl ignores it), `https_proxy` or
 * `HTTPS_PROXY`, `all_proxy` or `ALL_PROXY`, and `no_proxy` or `NO_PROXY`. `--proxy` wins over all of them
 * but not over NO_PROXY, as with curl.
 */
/** `given`: the proxy the caller was given, and the name of that setting for messages. */
export function proxyFor(
  target: URL,
  env: NodeJS.ProcessEnv,
  given?: { url: string | undefined; name: string },
): ProxyChoice {
  if (bypassed(target, env.no_proxy ?? env.NO_PROXY ?? "")) return {};
  const candidates: Array<[string, string | undefined]> = [
    [given?.name ?? "proxy", given?.url],
    ...(target.protocol === "https:"
      ? ([
          ["https_proxy", env.https_proxy],
          ["HTTPS_PROXY", env.HTTPS_PROXY],
        ] as Array<[string, string | undefined]>)
      : ([["http_proxy", env.http_proxy]] as Array<[string, string | undefined]>)),
    ["all_proxy", env.all_proxy],
    ["ALL_PROXY", env.ALL_PROXY],
  ];
  for (const [source, value] of candidates) {
    if (!value) continue;
    // curl takes a proxy without a scheme as http://.
    const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
    let proxy: URL;
    try {
      proxy = new URL(text);
    } catch {
      throw new ProxyConfigError(`${source} is not a proxy URL (got "${value}")`);
    }
    if (proxy.protocol !== "http:" && proxy.protocol !== "https:") {
      throw new ProxyConfigError(`${source} must be an http:// or https:// proxy (got ${proxy.protocol}//)`);
    }
    return { proxy, source };
  }
  return {};
}

/** A note for reports when the environment sets a variable the run ignores on purpose. */
export function ignoredProxyVariables(env: NodeJS.ProcessEnv): string[] {
  return env.HTTP_PROXY && !env.http_proxy
    ? [
        "HTTP_PROXY is set and ignored, as curl ignores it (httpoxy); set http_proxy to use a proxy for http:// targets",
      ]
    : [];
}

export class ProxyConfigError extends Error {
  override name = "ProxyConfigError";
}

/** curl's NO_PROXY: `*`, or host names and IP addresses, each matching itself and its subdomains. */
function bypassed(target: URL, noProxy: string): boolean {
  const host = target.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return true;
    const [name = "", entryPort] = entry.startsWith("[") ? splitBracketed(entry) : entry.split(":");
    if (entryPort !== undefined && entryPort !== port) continue;
    const domain = name.replace(/^\*?\./, "");
    if (host === domain || host.endsWith(`.${domain}`)) return true;
  }
  return false;
}

function splitBracketed(entry: string): [string, string | undefined] {
  const close = entry.indexOf("]");
  const port = entry.slice(close + 1).replace(/^:/, "");
  return [entry.slice(1, close), port === "" ? undefined : port];
}
