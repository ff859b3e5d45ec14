import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";

/**
 * The body as the checks read it: a compressed answer is forwarded as it came and judged decompressed.
 * One that cannot be decoded is judged as it came, and fails the body check as what a client cannot read.
 */
export function decodeBody(raw: Buffer, contentEncoding: string | undefined): Buffer {
  const encoding = contentEncoding?.trim().toLowerCase();
  if (!encoding || encoding === "identity" || raw.length === 0) return raw;
  try {
    if (encoding === "gzip" || encoding === "x-gzip") return gunzipSync(raw);
    if (encoding === "deflate") return inflateSync(raw);
    if (encoding === "br") return brotliDecompressSync(raw);
  } catch {
    return raw;
  }
  return raw;
}
