/** What a request asked for with `Prefer` (RFC 7240), in Prism's vocabulary: `code=409, delay=800`. */
export interface Preferences {
  code?: number;
  delayMs?: number;
}

export const MAX_DELAY_MS = 60_000;
const NONE: Preferences = {};
const STATUS_CODE = /^[1-5]\d\d$/;
const DELAY = /^\d{1,5}$/;

/**
 * Reads the preferences this mock acts on and ignores any other (RFC 7240 §2: an unknown preference is
 * not an error). A malformed `code` or `delay` is a string that says what is wrong.
 */
export function parsePrefer(header: string): Preferences | string {
  if (header.trim() === "") return NONE;
  const preferences: Preferences = {};
  for (const item of header.split(",")) {
    const [preference = ""] = item.split(";");
    const equals = preference.indexOf("=");
    const name = (equals === -1 ? preference : preference.slice(0, equals)).trim().toLowerCase();
    const value = equals === -1 ? "" : unquote(preference.slice(equals + 1).trim());
    if (name === "code") {
      if (!STATUS_CODE.test(value)) return `Prefer: code must be an HTTP status code (got "${clip(value)}")`;
      preferences.code = Number(value);
    } else if (name === "delay") {
      if (!DELAY.test(value) || Number(value) > MAX_DELAY_MS) {
        return `Prefer: delay must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS} (got "${clip(value)}")`;
      }
      preferences.delayMs = Number(value);
    }
  }
  return preferences;
}

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

function clip(value: string): string {
  return value.length > 20 ? `${value.slice(0, 17)}...` : value;
}
