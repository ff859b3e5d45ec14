import { createHash, timingSafeEqual } from "node:crypto";

export type AuthResult = { ok: true } | { ok: false; tokenGiven: boolean };

// RFC 6750 `b64token` after a case-insensitive scheme name; white space around the token is tolerated.
const BEARER = /^[ \t]*bearer(?:[ \t]+(.*?))?[ \t]*$/i;

/**
 * Checks `Authorization: Bearer <key>` against the known keys. Digests of equal length are compared with
 * timingSafeEqual against every key, so neither the key's length nor its position leaks through timing.
 */
export function createAuthenticator(apiKeys: readonly string[]): (header: string | undefined) => AuthResult {
  const digests = apiKeys.map(digest);
  return (header) => {
    if (header === undefined) return { ok: false, tokenGiven: false };
    const token = BEARER.exec(header)?.[1];
    if (token === undefined || token === "") return { ok: false, tokenGiven: false };
    const candidate = digest(token);
    let matched = false;
    for (const known of digests) matched = timingSafeEqual(candidate, known) || matched;
    return matched ? { ok: true } : { ok: false, tokenGiven: true };
  };
}

function digest(key: string): Buffer {
  return createHash("sha256").update(key).digest();
}
