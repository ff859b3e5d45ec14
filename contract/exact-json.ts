import { isLosslessNumber, type LosslessNumber, parse, stringify } from "lossless-json";

/** Every JSON number of a parsed document stays as its source text, so int64 values are never rounded. */
export function parseExact(text: string): unknown {
  return parse(text);
}

export { isLosslessNumber };

/** JSON text in which bigint and exactly parsed numbers are written digit for digit. */
export function stringifyExact(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError("value has no JSON representation");
  return text;
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export function isInt64(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}

const NUMBER_LITERAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
// Any magnitude past 10^400 is far beyond int64; stopping there keeps BigInt work bounded for `1e999999999`.
const SATURATION_EXPONENT = 400;

/**
 * The integer a JSON number literal denotes (`12`, `1.2e1`, `-0`), or null when it has a fraction.
 * Exact up to 10^400 in magnitude; larger integers come back as ±10^400 (still not int64).
 */
export function exactInteger(literal: string): bigint | null {
  const match = NUMBER_LITERAL.exec(literal);
  if (!match) return null;
  const [, sign, whole = "", fraction = "", exponentText = "0"] = match;
  const digits = BigInt(whole + fraction);
  if (digits === 0n) return 0n;
  const shift = Number(exponentText) - fraction.length;
  let magnitude: bigint;
  if (shift > SATURATION_EXPONENT) {
    magnitude = 10n ** BigInt(SATURATION_EXPONENT);
  } else if (shift >= 0) {
    magnitude = digits * 10n ** BigInt(shift);
  } else {
    // A divisor with more digits than the dividend cannot divide it.
    if (-shift > whole.length + fraction.length) return null;
    const divisor = 10n ** BigInt(-shift);
    if (digits % divisor !== 0n) return null;
    magnitude = digits / divisor;
  }
  return sign ? -magnitude : magnitude;
}

// Out-of-range integers are projected here: far enough outside int64 that the int64 format rejects them.
const OUT_OF_INT64 = 2 ** 64;

/**
 * A copy of an exactly parsed document in which numbers are plain JS numbers, for JSON Schema validation.
 * Integers keep their int64 standing: one inside int64 maps to a number in [-2^63, 2^63] even when
 * rounding moves it, one outside maps to ±2^64, so the `int64` format judges the exact value.
 */
export function toSchemaView(value: unknown): unknown {
  if (isLosslessNumber(value)) return projectNumber(value as LosslessNumber);
  if (Array.isArray(value)) return value.map(toSchemaView);
  if (value !== null && typeof value === "object") {
    const view: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      Object.defineProperty(view, key, { value: toSchemaView(member), enumerable: true, writable: true });
    }
    return view;
  }
  return value;
}

function projectNumber(number: LosslessNumber): number {
  const integer = exactInteger(number.value);
  if (integer === null) return Number(number.value);
  if (isInt64(integer)) return Number(integer);
  return integer < 0n ? -OUT_OF_INT64 : OUT_OF_INT64;
}

/** The int64 format for validators fed by toSchemaView: its bounds are those of the projection. */
export function isInt64Projection(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 63) && value <= 2 ** 63;
}
