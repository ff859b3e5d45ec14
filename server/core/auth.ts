import { bearerToken } from "../../common/bearer.ts";

export type AuthResult = { ok: true } | { ok: false; tokenGiven: boolean };

const ACCEPTED: AuthResult = { ok: true };
const NO_TOKEN: AuthResult = { ok: false, tokenGiven: false };
const UNKNOWN_TOKEN: AuthResult = { ok: false, tokenGiven: true };

/**
 * Checks `Authorization: Bearer <key>` against the known keys, in constant time: every key is compared
 * over the full length of the longer string with no early exit, so timing reveals neither how much of a key
 * matched nor which key it was. This runs on every request, so it allocates nothing beyond the token itself
 * (a per-request hash would do the same at a third of the mock's throughput).
 */
export function createAuthenticator(apiKeys: readonly string[]): (header: string | undefined) => AuthResult {
  const keys = [...apiKeys];
  return (header) => {
    const token = bearerToken(header);
    if (token === undefined) return NO_TOKEN;
    let matched = 0;
    for (const key of keys) matched |= constantTimeEqual(token, key);
    return matched === 1 ? ACCEPTED : UNKNOWN_TOKEN;
  };
}

/** 1 when equal, else 0, after touching every code unit of the longer input whatever the inputs are. */
function constantTimeEqual(a: string, b: string): number {
  const length = Math.max(a.length, b.length);
  let difference = a.length ^ b.length;
  for (let index = 0; index < length; index++) {
    difference |= (index < a.length ? a.charCodeAt(index) : 0) ^ (index < b.length ? b.charCodeAt(index) : 0);
  }
  return difference === 0 ? 1 : 0;
}
