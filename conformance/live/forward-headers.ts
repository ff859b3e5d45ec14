/**
 * Headers as a proxy passes them on (RFC 9110 §7.6.1): hop-by-hop ones stay on their connection, and
 * every other header goes on as it came, in its order and spelling, repeated ones included. Headers are
 * kept in Node's raw form (name, value, name, value…) throughout: it is what they came in and go out as.
 */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

const initialOf = (name: string) => name.charCodeAt(0) | 0x20;
const HOP_BY_HOP_INITIALS = new Set([...HOP_BY_HOP].map(initialOf));
const CONNECTION = initialOf("connection");

/**
 * The raw headers without the hop-by-hop ones, those the Connection header names, and `drop`. Runs twice
 * per exchange: a name is lower-cased only when its first letter is one a dropped name starts with.
 */
function endToEnd(raw: readonly string[], drop?: ReadonlySet<string>): string[] {
  let named: Set<string> | undefined;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index] as string;
    if (name.length !== 10 || initialOf(name) !== CONNECTION || name.toLowerCase() !== "connection") continue;
    named ??= new Set();
    for (const token of (raw[index + 1] as string).split(",")) named.add(token.trim().toLowerCase());
  }
  const initials =
    named || drop
      ? new Set([...HOP_BY_HOP_INITIALS, ...[...(named ?? []), ...(drop ?? [])].map(initialOf)])
      : HOP_BY_HOP_INITIALS;
  const kept: string[] = [];
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index] as string;
    if (initials.has(initialOf(name))) {
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower) || named?.has(lower) || drop?.has(lower)) continue;
    }
    kept.push(name, raw[index + 1] as string);
  }
  return kept;
}

/** The client's headers for the upstream: Host names the upstream, and the proxy's own headers are added. */
export function forwardedRequestHeaders(
  raw: readonly string[],
  upstreamHost: string,
  added: ReadonlyArray<[string, string]>,
): string[] {
  const replaced = new Set(["host", ...added.map(([name]) => name.toLowerCase())]);
  return ["Host", upstreamHost, ...endToEnd(raw, replaced), ...added.flat()];
}

/** The upstream's headers for the client. */
export function forwardedResponseHeaders(raw: readonly string[]): string[] {
  return endToEnd(raw);
}

/** Raw headers as [name, value] pairs, for the HAR. */
export function pairsOf(raw: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let index = 0; index + 1 < raw.length; index += 2)
    pairs.push([raw[index] as string, raw[index + 1] as string]);
  return pairs;
}
