import { fullFormats } from "ajv-formats/dist/formats.js";
import { isInt64Projection } from "./exact-json.ts";

// ajv-formats accepts any integer as int64; values reach us projected so that the bounds can be exact.
export const INT64_FORMAT = { type: "number", validate: isInt64Projection } as const;

const fullDateTime = fullFormats["date-time"] as { validate: (text: string) => boolean; compare: unknown };
const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function digitsAt(codes: Uint8Array, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const digit = (codes[i] as number) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * Whether the ASCII codes `codes[start…end)` are certainly a date-time of the usual shapes,
 * `2026-01-02T03:04:05.678Z` and `…+01:00`, read by character code since a list of a million orders checks
 * a million ship dates. False is a doubt (leap seconds, other separators, odd shapes), not a verdict: the
 * caller asks ajv-formats' own check, so the verdict is always the one ajv-formats gives.
 */
export function certainDateTime(codes: Uint8Array, start: number, end: number): boolean {
  const length = end - start;
  if (length < 20 || codes[start + 4] !== 45 || codes[start + 7] !== 45) return false;
  const separator = codes[start + 10];
  if ((separator !== 84 && separator !== 116) || codes[start + 13] !== 58 || codes[start + 16] !== 58)
    return false;
  const year = digitsAt(codes, start, 4);
  const month = digitsAt(codes, start + 5, 2);
  const day = digitsAt(codes, start + 8, 2);
  const hour = digitsAt(codes, start + 11, 2);
  const minute = digitsAt(codes, start + 14, 2);
  const second = digitsAt(codes, start + 17, 2);
  let at = start + 19;
  if (codes[at] === 46) {
    at++;
    const fractionStart = at;
    while (at < end && (codes[at] as number) >= 48 && (codes[at] as number) <= 57) at++;
    if (at === fractionStart) return false;
  }
  const zone = codes[at];
  let zoneOk = false;
  if ((zone === 90 || zone === 122) && at + 1 === end) zoneOk = true;
  else if ((zone === 43 || zone === 45) && at + 6 === end && codes[at + 3] === 58) {
    const zoneHour = digitsAt(codes, at + 1, 2);
    const zoneMinute = digitsAt(codes, at + 4, 2);
    zoneOk = zoneHour >= 0 && zoneHour <= 23 && zoneMinute >= 0 && zoneMinute <= 59;
  }
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return (
    zoneOk &&
    year >= 0 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month] as number)) &&
    hour >= 0 &&
    hour <= 23 &&
    minute >= 0 &&
    minute <= 59 &&
    second >= 0 &&
    second <= 59
  );
}

const SHAPED_CHARS = 40;
const shapedCodes = new Uint8Array(SHAPED_CHARS);

/** A date-time by its usual shape when it is one, by ajv-formats otherwise. */
export function isDateTime(text: string): boolean {
  const length = text.length;
  if (length <= SHAPED_CHARS) {
    // Only an ASCII text may be certain: a wider character would not fit its byte.
    let ascii = true;
    for (let i = 0; i < length && ascii; i++) {
      const code = text.charCodeAt(i);
      ascii = code <= 0x7f;
      shapedCodes[i] = code;
    }
    if (ascii && certainDateTime(shapedCodes, 0, length)) return true;
  }
  return fullDateTime.validate(text);
}

/**
 * Every format the contracts' validators may name, for validators compiled ahead of time: the generated
 * code looks formats up here instead of in an ajv instance.
 */
export const formats = {
  ...fullFormats,
  "date-time": { validate: isDateTime, compare: fullDateTime.compare },
  int64: INT64_FORMAT,
};
