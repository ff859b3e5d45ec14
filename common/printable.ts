/**
 * Text from a target or a caller made safe to print: control characters (C0, DEL, C1) and the Unicode
 * formatting characters that reorder or hide text (bidirectional overrides and isolates, zero-width
 * joiners) become visible escapes, so that no byte of it moves a terminal's cursor, changes its title,
 * writes its clipboard, or makes one line look like another; unpaired surrogates (which no UTF-8 file can
 * hold, and which XML forbids) are escaped the same way. Newlines and tabs stay when `multiline` is asked.
 */
export function printable(text: string, multiline = false): string {
  return text.replace(multiline ? MULTILINE_UNSAFE : UNSAFE, escapeChar);
}

// Written as strings: the characters themselves must not appear in the source.
const INVISIBLE = "\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2066-\\u2069\\ufeff";
const LONE_SURROGATE = "[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]";
const UNSAFE = new RegExp(`[\\x00-\\x1f\\x7f-\\x9f${INVISIBLE}]|${LONE_SURROGATE}`, "g");
const MULTILINE_UNSAFE = new RegExp(`[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f${INVISIBLE}]|${LONE_SURROGATE}`, "g");

function escapeChar(char: string): string {
  const code = char.charCodeAt(0);
  if (char === "\n") return "\\n";
  if (char === "\r") return "\\r";
  if (char === "\t") return "\\t";
  if (char === "\x1b") return "\\e";
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}
