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
const CONNECTION = initialOf("connection");

/** Drops hop-by-hop headers from raw headers, appending those it keeps to `kept` (a new list if none). */
type HeaderFilter = (raw: readonly string[], kept?: string[]) => string[];

/**
 * A filter of raw headers: without the hop-by-hop ones, those the Connection header names, and `drop`.
 * It runs twice per exchange, so what it can know in advance is computed once: a name is lower-cased only
 * when its length and first letter are those of a dropped name, or when Connection names one more.
 */
function createFilter(drop: ReadonlySet<string>): HeaderFilter {
  const dropped = new Set([...HOP_BY_HOP, ...drop]);
  const initials = new Set([...dropped].map(initialOf));
  const lengths = new Set([...dropped].map((name) => name.length));
  return (raw, kept = []) => {
    const named = connectionNamed(raw, dropped);
    for (let index = 0; index < raw.length; index += 2) {
      const name = raw[index] as string;
      if (named !== undefined || (lengths.has(name.length) && initials.has(initialOf(name)))) {
        const lower = name.toLowerCase();
        if (dropped.has(lower) || named?.has(lower)) continue;
      }
      kept.push(name, raw[index + 1] as string);
    }
    return kept;
  };
}

/**
 * The names the Connection headers list that are not dropped anyway, if any: most list only
 * `keep-alive`, and then no other name needs lower-casing.
 */
function connectionNamed(raw: readonly string[], dropped: ReadonlySet<string>): Set<string> | undefined {
  let named: Set<string> | undefined;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index] as string;
    if (name.length !== 10 || initialOf(name) !== CONNECTION) continue;
    if (name !== "Connection" && name.toLowerCase() !== "connection") continue;
    const value = raw[index + 1] as string;
    if (value === "keep-alive") continue;
    for (const token of value.split(",")) {
      const lower = token.trim().toLowerCase();
      if (dropped.has(lower)) continue;
      named ??= new Set();
      named.add(lower);
    }
  }
  return named;
}

/**
 * The client's headers for the upstream: Host names the upstream, and the proxy's own headers (`added`)
 * replace any of the same name.
 */
export function requestHeaderFilter(
  upstreamHost: string,
  added: ReadonlyArray<[string, string]>,
): (raw: readonly string[]) => string[] {
  const filter = createFilter(new Set(["host", ...added.map(([name]) => name.toLowerCase())]));
  const tail = added.flat();
  return (raw) => {
    const kept = filter(raw, ["Host", upstreamHost]);
    for (const item of tail) kept.push(item);
    return kept;
  };
}

/** The upstream's headers for the client. */
const responseFilter = createFilter(new Set());
export const forwardedResponseHeaders = (raw: readonly string[]): string[] => responseFilter(raw);

/** Raw headers as [name, value] pairs, for the HAR. */
export function pairsOf(raw: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let index = 0; index + 1 < raw.length; index += 2)
    pairs.push([raw[index] as string, raw[index + 1] as string]);
  return pairs;
}
