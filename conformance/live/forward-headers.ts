/**
 * Headers as a proxy passes them on (RFC 9110 §7.6.1): hop-by-hop ones stay on their connection, and
 * every other header goes on as it came, in its order and spelling, repeated ones included.
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

/** Node's raw header list (name, value, name, value…) as pairs. */
export function pairsOf(raw: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let index = 0; index + 1 < raw.length; index += 2)
    pairs.push([raw[index] as string, raw[index + 1] as string]);
  return pairs;
}

function endToEnd(pairs: ReadonlyArray<[string, string]>): Array<[string, string]> {
  const named = new Set<string>();
  for (const [name, value] of pairs) {
    if (name.toLowerCase() === "connection")
      for (const token of value.split(",")) named.add(token.trim().toLowerCase());
  }
  return pairs.filter(([name]) => {
    const lower = name.toLowerCase();
    return !HOP_BY_HOP.has(lower) && !named.has(lower);
  });
}

/** The client's headers for the upstream: Host names the upstream, and the proxy's own headers are added. */
export function forwardedRequestHeaders(
  pairs: ReadonlyArray<[string, string]>,
  upstreamHost: string,
  added: ReadonlyArray<[string, string]>,
): string[] {
  const replaced = new Set(["host", ...added.map(([name]) => name.toLowerCase())]);
  const kept = endToEnd(pairs).filter(([name]) => !replaced.has(name.toLowerCase()));
  return [["Host", upstreamHost] as [string, string], ...kept, ...added].flat();
}

/** The upstream's headers for the client. */
export function forwardedResponseHeaders(raw: readonly string[]): Array<[string, string]> {
  return endToEnd(pairsOf(raw));
}
