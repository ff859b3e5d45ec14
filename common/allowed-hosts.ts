/**
 * Which Host names a local server answers, so that a web page cannot reach it through a name it controls
 * (DNS rebinding: `rebind.attacker.example` resolving to 127.0.0.1 makes the page same-origin with the
 * server, and the browser then lets it read every answer). Loopback names always; the address it is bound
 * to; any IP address literal when bound to every interface (a name would need --allowed-host); and the names
 * given with --allowed-host.
 */
export interface AllowedHosts {
  /** Whether a request with this Host header (name and optional port) is addressed to this server. */
  allows(host: string | undefined): boolean;
  /** The names for a message: who may address it. */
  readonly described: string;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

export function allowedHosts(boundTo: string, extra: readonly string[] = []): AllowedHosts {
  const wildcard = boundTo === "0.0.0.0" || boundTo === "::" || boundTo === "";
  const names = new Set(
    [...LOOPBACK_NAMES, ...(wildcard ? [] : [boundTo]), ...extra].map((name) => bare(name.toLowerCase())),
  );
  return {
    allows(host) {
      if (host === undefined) return false;
      const name = bare(hostname(host.toLowerCase()));
      if (names.has(name) || name.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(name)) return true;
      return wildcard && isIpLiteral(name);
    },
    described: [...names, ...(wildcard ? ["any IP address"] : [])].join(", "),
  };
}

/** The name of a Host header without its port: `[::1]:4010` → `[::1]`, `localhost:4010` → `localhost`. */
function hostname(host: string): string {
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1);
  const colon = host.lastIndexOf(":");
  return colon === -1 ? host : host.slice(0, colon);
}

function bare(name: string): string {
  return name.replace(/^\[|\]$/g, "").replace(/\.$/, "");
}

function isIpLiteral(name: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || (name.includes(":") && /^[0-9a-f:.]+$/.test(name));
}

/** Whether an address to bind to is reachable from this machine only. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
