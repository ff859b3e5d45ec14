export type AuthResult = { ok: true } | { ok: false; tokenGiven: boolean };

// RFC 6750 `b64token` after a case-insensitive scheme name; white space around the token is tolerated.
const BEARER = /^[ \t]*bearer(?:[ \t]+(.*?))?[ \t]*$/i;

/**
 * Checks `Authorization: Bearer <key>` against the known keys, in constant time: every key is compared
 * over the full length of the longer string with no early exit, so timing reveals neither how much of a key
 * matched nor which key it was. (A per-request hash would do the same at a third of the mock's throughput.)
 */
export function createAuthenticator(apiKeys: readonly string[]): (header: string | undefined) => AuthResult {
  const keys = apiKeys.map((key) => Buffer.from(key, "utf8"));
  return (header) => {
    if (header === undefined) return { ok: false, tokenGiven: false };
    const token = BEARER.exec(header)?.[1];
    if (token === undefined || token === "") return { ok: false, tokenGiven: false };
    const candidate = Buffer.from(token, "utf8");
    let matched = 0;
    for (const key of keys) matched |= constantTimeEqual(candidate, key);
    return matched === 1 ? { ok: true } : { ok: false, tokenGiven: true };
  };
}

/** 1 when equal, else 0, after touching every byte of the longer input whatever the inputs are. */
function constantTimeEqual(a: Buffer, b: Buffer): number {
  const length = Math.max(a.length, b.length);
  let difference = a.length ^ b.length;
  for (let index = 0; index < length; index++) difference |= (a[index] ?? 0) ^ (b[index] ?? 0);
  return difference === 0 ? 1 : 0;
}
