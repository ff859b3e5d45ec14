import fc from "fast-check";

/**
 * Pieces of a credential no strict decoder reads: a byte of no UTF-8, `%zz`, a lone `%`, a cut or overlong
 * sequence, a surrogate; with a decodable `%C3%A9` and a `+` beside them.
 */
export const BROKEN_PIECES = [
  "%E9",
  "%zz",
  "%",
  "%C3",
  "%C0%AF",
  "%F0%9F%98",
  "%ED%A0%80",
  "%FF",
  "%C3%A9",
  "+",
];

/** One broken piece, or (with `unreserved`) also a character percent-encoding leaves as it is. */
export function brokenPiece(unreserved = false): fc.Arbitrary<string> {
  return fc.constantFrom(...BROKEN_PIECES, ...(unreserved ? ["-", "_", ".", "~"] : []));
}

/** A short run of pieces and letters or digits, around a broken value's core. */
export function piecesAround(piece: fc.Arbitrary<string>): fc.Arbitrary<string[]> {
  return fc.array(fc.oneof(piece, fc.stringMatching(/^[A-Za-z0-9]{1,3}$/)), { maxLength: 3 });
}
