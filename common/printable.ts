/**
 * Text from a target or a caller made safe to print: control characters (C0, DEL, C1) and every Unicode
 * character that reorders, hides or breaks text become visible escapes, so that no byte of it moves a
 * terminal's cursor, changes its title, writes its clipboard, makes one line look like another, or breaks
 * an XML report. Escaped: bidirectional marks, overrides and isolates; zero-width and invisible characters
 * (joiners, word joiner, soft hyphen, invisible operators, fillers, the Mongolian vowel separator,
 * variation selectors, tag characters); the line and paragraph separators; the interlinear annotation and
 * object replacement characters; non-characters (U+FDD0–U+FDEF, U+FFFE, U+FFFF, which XML forbids or
 * discourages); unpaired surrogates, which no UTF-8 text can hold. Newlines and tabs stay when `multiline`
 * is asked.
 */
export function printable(text: string, multiline = false): string {
  return text.replace(multiline ? MULTILINE_UNSAFE : UNSAFE, escapeChar);
}

// Written as escapes: the characters themselves must not appear in the source.
const INVISIBLE = [
  "\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f",
  "\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\u3164",
  "\\ufdd0-\\ufdef\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffc\\ufffe\\uffff",
  "\\u{1d173}-\\u{1d17a}\\u{e0000}-\\u{e007f}\\u{e0100}-\\u{e01ef}",
  // With the u flag a surrogate in a class matches only one that is unpaired.
  "\\ud800-\\udfff",
].join("");
const UNSAFE = new RegExp(`[\\x00-\\x1f\\x7f-\\x9f${INVISIBLE}]`, "gu");
const MULTILINE_UNSAFE = new RegExp(`[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f${INVISIBLE}]`, "gu");

function escapeChar(char: string): string {
  const code = char.codePointAt(0) as number;
  if (char === "\n") return "\\n";
  if (char === "\r") return "\\r";
  if (char === "\t") return "\\t";
  if (char === "\x1b") return "\\e";
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\u{${code.toString(16)}}`;
}
