import { fullFormats } from "ajv-formats/dist/formats.js";
import { isInt64Projection } from "./exact-json.ts";

// ajv-formats accepts any integer as int64; values reach us projected so that the bounds can be exact.
export const INT64_FORMAT = { type: "number", validate: isInt64Projection } as const;

/**
 * Every format the contracts' validators may name, for validators compiled ahead of time: the generated
 * code looks formats up here instead of in an ajv instance.
 */
export const formats = { ...fullFormats, int64: INT64_FORMAT };
