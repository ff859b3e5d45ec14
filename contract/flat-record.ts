import type { SchemaObject } from "./document.ts";
import { certainDateTime, formats } from "./formats.ts";

/**
 * A flat JSON object (no nesting; numbers plain integers of up to 15 digits; strings of printable ASCII
 * with no escapes; true, false, null) read straight from the bytes of a stream with no object made: a
 * list of a million orders is a million of these, and making each one an object and validating that
 * costs more than reading the bytes. Whatever is not flat is read the ordinary way.
 */
export const KIND_NUMBER = 0;
export const KIND_STRING = 1;
export const KIND_TRUE = 2;
export const KIND_FALSE = 3;
export const KIND_NULL = 4;
/**
 * An integer of 16 to 19 digits, beyond what a double holds exactly: only its digits (`starts`..`ends`),
 * and only for a reader that asked for them (`flatLongIntegers`).
 */
export const KIND_LONG_INTEGER = 5;
/** The most digits a KIND_LONG_INTEGER has: int64's. */
export const MAX_LONG_INTEGER_DIGITS = 19;

export const MAX_FLAT_FIELDS = 16;

/** One flat object's fields, valid until the callback it is handed to returns (it is reused). */
export class FlatFields {
  count = 0;
  readonly keys: string[] = new Array(MAX_FLAT_FIELDS).fill("");
  readonly kinds = new Uint8Array(MAX_FLAT_FIELDS);
  /** A number's value. */
  readonly numbers = new Float64Array(MAX_FLAT_FIELDS);
  /** A value's JSON text in `bytes`; for a string, its bytes between the quotes. */
  readonly starts = new Int32Array(MAX_FLAT_FIELDS);
  readonly ends = new Int32Array(MAX_FLAT_FIELDS);
  bytes: Uint8Array = new Uint8Array(0);
  /** Where the object's opening brace is in `bytes`. */
  open = 0;

  /** The field with this key, or -1. */
  indexOf(key: string): number {
    for (let k = 0; k < this.count; k++) if (this.keys[k] === key) return k;
    return -1;
  }

  /** Where a value's JSON text begins in `bytes`, quotes included. */
  jsonStart(field: number): number {
    return (this.starts[field] as number) - (this.kinds[field] === KIND_STRING ? 1 : 0);
  }

  jsonEnd(field: number): number {
    return (this.ends[field] as number) + (this.kinds[field] === KIND_STRING ? 1 : 0);
  }

  /** A string field's text: its bytes are ASCII, one character each (no Buffer: browsers read fixtures too). */
  text(field: number): string {
    const end = this.ends[field] as number;
    let text = "";
    for (let at = this.starts[field] as number; at < end; at++)
      text += String.fromCharCode(this.bytes[at] as number);
    return text;
  }
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
// Keywords that change nothing a value is judged by.
const ANNOTATIONS = new Set([
  "description",
  "title",
  "example",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
]);
const dateTime = formats["date-time"].validate;

type PropertyCheck = (fields: FlatFields, field: number) => boolean;

/** A number, or a long integer within int64 (whose exact value a schema check sees). */
const wholeNumber: PropertyCheck = (fields, field) =>
  fields.kinds[field] === KIND_NUMBER ||
  (fields.kinds[field] === KIND_LONG_INTEGER && longIntegerWithinInt64(fields, field));

/** A KIND_LONG_INTEGER's digits within int64. */
export function longIntegerWithinInt64(fields: FlatFields, field: number): boolean {
  const bytes = fields.bytes;
  const end = fields.ends[field] as number;
  let start = fields.starts[field] as number;
  const negative = bytes[start] === 0x2d;
  if (negative) start++;
  if (end - start < MAX_LONG_INTEGER_DIGITS) return true;
  const bound = negative ? "9223372036854775808" : "9223372036854775807";
  for (let at = 0; at < MAX_LONG_INTEGER_DIGITS; at++) {
    const digit = bytes[start + at] as number;
    const most = bound.charCodeAt(at);
    if (digit !== most) return digit < most;
  }
  return true;
}

const CHECKS: Record<string, PropertyCheck> = {
  integer: wholeNumber,
  "integer/int64": wholeNumber,
  "integer/int32": (fields, field) => {
    const value = fields.numbers[field] as number;
    return fields.kinds[field] === KIND_NUMBER && value >= INT32_MIN && value <= INT32_MAX;
  },
  number: wholeNumber,
  string: (fields, field) => fields.kinds[field] === KIND_STRING,
  "string/date-time": (fields, field) =>
    fields.kinds[field] === KIND_STRING &&
    (certainDateTime(fields.bytes, fields.starts[field] as number, fields.ends[field] as number) ||
      dateTime(fields.text(field))),
  boolean: (fields, field) => fields.kinds[field] === KIND_TRUE || fields.kinds[field] === KIND_FALSE,
};

/**
 * A schema's verdict on flat objects, for the schemas simple enough to be judged without ajv: an object of
 * typed properties (integer, number, string, boolean; formats int64, int32, date-time), some required,
 * others allowed. `valid` is a promise only when it says yes: a no may be a doubt, so the caller asks the
 * schema's validator, whose messages are the ones reported.
 */
export interface FlatRecordPlan {
  valid(fields: FlatFields): boolean;
}

/** The plan of a schema, or undefined when the schema holds anything it cannot promise about. */
export function flatRecordPlan(schema: SchemaObject | undefined): FlatRecordPlan | undefined {
  if (schema === undefined || schema.type !== "object") return undefined;
  for (const keyword of Object.keys(schema)) {
    if (keyword !== "type" && keyword !== "properties" && keyword !== "required" && !ANNOTATIONS.has(keyword))
      return undefined;
  }
  const checks = new Map<string, PropertyCheck>();
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    for (const keyword of Object.keys(property)) {
      if (keyword !== "type" && keyword !== "format" && !ANNOTATIONS.has(keyword)) return undefined;
    }
    const check =
      typeof property.type === "string"
        ? CHECKS[
            property.format === undefined ? property.type : `${property.type}/${String(property.format)}`
          ]
        : undefined;
    if (check === undefined) return undefined;
    checks.set(name, check);
  }
  const required = schema.required ?? [];
  if (!Array.isArray(required) || required.some((name) => typeof name !== "string")) return undefined;
  // The orders of a list mostly share one shape (the same keys in the same order): what a shape needs is
  // worked out once and reused while the keys, which the stream reads as one string each, stay the same.
  const shape = new FieldShape<{ checks: Array<PropertyCheck | undefined>; complete: boolean }>((fields) => ({
    checks: Array.from({ length: fields.count }, (_, field) => checks.get(fields.keys[field] as string)),
    complete: required.every((name) => fields.indexOf(name) !== -1),
  }));
  return {
    valid(fields) {
      const { checks: byField, complete } = shape.of(fields);
      for (let field = 0; field < fields.count; field++) {
        const check = byField[field];
        if (check !== undefined && !check(fields, field)) return false;
      }
      return complete;
    },
  };
}

/** What one shape of flat object (its keys, in order) works out to, remembered for the shape last seen. */
export class FieldShape<T> {
  readonly #keys: string[] = [];
  #value: T | undefined;

  constructor(private readonly derive: (fields: FlatFields) => T) {}

  of(fields: FlatFields): T {
    const keys = this.#keys;
    let same = this.#value !== undefined && keys.length === fields.count;
    for (let field = 0; same && field < fields.count; field++) same = keys[field] === fields.keys[field];
    if (same) return this.#value as T;
    keys.length = fields.count;
    for (let field = 0; field < fields.count; field++) keys[field] = fields.keys[field] as string;
    this.#value = this.derive(fields);
    return this.#value;
  }
}
