import type { ErrorObject, ValidateFunction } from "ajv";
import { escapePointer } from "./contract.ts";
import { exactInteger, isLosslessNumber, roundedFractionCount, toSchemaView } from "./exact-json.ts";

/**
 * A parsed document validated on its exact numbers. Validators see doubles (toSchemaView), and a fraction
 * such as 9007199254740993.5 or 1e-400 rounds to an integer there, where `type: integer` would pass it.
 * When the projection rounded one, the document is validated again with each such number replaced by 0.5,
 * a double that is no integer, and the `integer` type errors found at their places are added: a fraction
 * is never an integer, whatever a double makes of it. `validate.errors` is left as ajv would leave it.
 */
export function validateExact(validate: ValidateFunction, value: unknown): boolean {
  const before = roundedFractionCount();
  const valid = validate(toSchemaView(value));
  if (roundedFractionCount() === before) return valid;
  const errors: ErrorObject[] = [...(validate.errors ?? [])];
  const places = new Set<string>();
  validate(markedView(value, "", places));
  for (const error of validate.errors ?? []) {
    const integral = error.keyword === "type" && String(error.params.type).split(",").includes("integer");
    if (integral && places.has(error.instancePath)) errors.push(error);
  }
  validate.errors = errors.length > 0 ? errors : null;
  return errors.length === 0;
}

/** The schema view with every fraction that a double would round to an integer as 0.5; their places noted. */
function markedView(value: unknown, path: string, places: Set<string>): unknown {
  if (isLosslessNumber(value)) {
    const text = (value as { value: string }).value;
    if (exactInteger(text) === null && Number.isInteger(Number(text))) {
      places.add(path);
      return 0.5;
    }
    return toSchemaView(value);
  }
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value))
    return value.map((member, index) => markedView(member, `${path}/${index}`, places));
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(copy, key, {
      value: markedView((value as Record<string, unknown>)[key], `${path}/${escapePointer(key)}`, places),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}
