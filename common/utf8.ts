// UTF-8 by RFC 3629, in plain code that runs in browsers as well as in Node.

/**
 * A message naming the byte at `offset` (and its value, when known), for an answer that is not UTF-8;
 * `unfinished`: the bytes ended inside that character.
 */
export function notUtf8(offset: number, byte: number | undefined, unfinished = false): string {
  const named = byte === undefined ? "" : ` (0x${byte.toString(16).padStart(2, "0")})`;
  const why = unfinished ? "is cut short by the end" : "is not one";
  return `it is not UTF-8, which JSON must be (RFC 8259 §8.1): the character at byte ${offset}${named} ${why}`;
}

/**
 * The offset of the first byte that begins no UTF-8 character, or -1. `open`: the bytes may stop inside a
 * character, which is then no fault of theirs.
 */
export function firstNonUtf8(bytes: Uint8Array, open: boolean): number {
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at] as number;
    if (lead < 0x80) {
      at++;
      continue;
    }
    const length = sequenceLength(lead);
    if (length === 0) return at;
    // The second byte's range is narrower after some leads: no overlong form, surrogate or value past U+10FFFF.
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    for (let next = 1; next < length; next++) {
      if (at + next >= bytes.length) return open ? -1 : at;
      const byte = bytes[at + next] as number;
      if (next === 1 ? byte < low || byte > high : (byte & 0xc0) !== 0x80) return at;
    }
    at += length;
  }
  return -1;
}

/** How many bytes a character with this first byte has; 0 when no character begins with it. */
export function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}
