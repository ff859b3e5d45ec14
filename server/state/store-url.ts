/** A `--store` address as given, and as it may be shown: never with its user name or password. */
export interface StoreAddress {
  url: string;
  /** `redis://host:port/db`, for start-up lines, errors and logs. */
  shown: string;
}

const DEFAULT_PORT = "6379";

/** Reads `redis://[user:password@]host[:port][/db]` (or `rediss://` for TLS); anything else is a usage problem. */
export function parseStoreUrl(text: string): StoreAddress | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "--store must be a URL like redis://host:6379 (it could not be read as a URL)";
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    return `--store must be a redis:// or rediss:// URL (got ${url.protocol}//…)`;
  }
  if (url.hostname === "") return "--store needs a host, as in redis://127.0.0.1:6379";
  const db = url.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d+$/.test(db))
    return `--store: the database after the host must be a number (got "${db}")`;
  const shown = `${url.protocol}//${url.host.includes(":") ? url.host : `${url.host}:${DEFAULT_PORT}`}/${db || "0"}`;
  return { url: text, shown };
}
