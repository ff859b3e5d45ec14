import { fullFormats } from "ajv-formats/dist/formats.js";
import { isInt64Projection } from "./exact-json.ts";

// ajv-formats accepts any integer as int64; values reach us projected so that the bounds can be exact.
export const INT64_FORMAT = { type: "number", validate: isInt64Projection } as const;

const fullDateTime = fullFormats["date-time"] as { validate: (text: string) => boolean; compare: unknown };
const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * `2026-01-02T03:04:05.678Z` and `…+01:00` answered by character codes, since a list of a million orders
 * checks a million ship dates; anything else (leap seconds, other separators, odd shapes, any doubt) goes
 * to ajv-formats' own check, so the verdict is always the one ajv-formats gives.
 */
function isDateTime(text: string): boolean {
  const length = text.length;
  if (length < 20 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45)
    return fullDateTime.validate(text);
  const separator = text.charCodeAt(10);
  if ((separator !== 84 && separator !== 116) || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58)
    return fullDateTime.validate(text);
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  let at = 19;
  if (text.charCodeAt(at) === 46) {
    at++;
    const fractionStart = at;
    while (at < length && text.charCodeAt(at) >= 48 && text.charCodeAt(at) <= 57) at++;
    if (at === fractionStart) return fullDateTime.validate(text);
  }
  const zone = text.charCodeAt(at);
  let zoneOk = false;
  if ((zone === 90 || zone === 122) && at + 1 === length) zoneOk = true;
  else if ((zone === 43 || zone === 45) && at + 6 === length && text.charCodeAt(at + 3) === 58) {
    const zoneHour = digitsAt(text, at + 1, 2);
    const zoneMinute = digitsAt(text, at + 4, 2);
    zoneOk = zoneHour >= 0 && zoneHour <= 23 && zoneMinute >= 0 && zoneMinute <= 59;
  }
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const certain =
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
    second <= 59;
  return certain || fullDateTime.validate(text);
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
