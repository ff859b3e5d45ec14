import { isLosslessNumber, LosslessNumber, parse, stringify } from "lossless-json";

// Plain integers of up to 15 digits are exact as doubles; they are most numbers, and plain numbers are cheap.
const SMALL_INTEGER = /^-?\d{1,15}$/;

function parseNumber(literal: string): number | LosslessNumber {
  return SMALL_INTEGER.test(literal) ? Number(literal) : new LosslessNumber(literal);
}

/**
 * JSON parsed without losing a digit: plain integers of up to 15 digits come back as numbers (a double
 * holds them exactly); every other number (larger integers, fractions, exponents) as a LosslessNumber
 * holding its source text. Either way, `numberText` gives the number as written.
 */
export function parseExact(text: string): unknown {
  return parse(text, null, parseNumber);
}

export { isLosslessNumber };

/** A JSON object of a parsed document: not an array, and not one of its exactly parsed numbers. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !isLosslessNumber(value);
}

/** True for any JSON number of a parsed document, exact or not. */
export function isJsonNumber(value: unknown): value is number | LosslessNumber {
  return typeof value === "number" || isLosslessNumber(value);
}

/** A parsed JSON number as it was written (for small integers, their canonical digits). */
export function numberText(value: number | LosslessNumber): string {
  return typeof value === "number" ? String(value) : value.value;
}

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
  if (value === null || typeof value !== "object") return value;
  if (isLosslessNumber(value)) return projectNumber(value as LosslessNumber);
  // Copies are made only where something changes: most documents hold no LosslessNumber at all.
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const member = value[index];
      const projected = toSchemaView(member);
      if (projected !== member) {
        copy ??= value.slice();
        copy[index] = projected;
      }
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key];
    const projected = toSchemaView(member);
    if (projected !== member) {
      copy ??= shallowCopy(value as Record<string, unknown>);
      // defineProperty keeps a `__proto__` key an ordinary property instead of a prototype change.
      Object.defineProperty(copy, key, {
        value: projected,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return copy ?? value;
}

function shallowCopy(value: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(copy, key, {
      value: value[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/** How many fractions toSchemaView has projected onto integers (9007199254740993.5, 1e-400): see validateExact. */
let roundedFractions = 0;

export function roundedFractionCount(): number {
  return roundedFractions;
}

function projectNumber(number: LosslessNumber): number {
  const integer = exactInteger(number.value);
  if (integer === null) {
    const projected = Number(number.value);
    if (Number.isInteger(projected)) roundedFractions++;
    return projected;
  }
  if (isInt64(integer)) return Number(integer);
  return integer < 0n ? -OUT_OF_INT64 : OUT_OF_INT64;
}

/** The int64 format for validators fed by toSchemaView: its bounds are those of the projection. */
export function isInt64Projection(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 63) && value <= 2 ** 63;
}
