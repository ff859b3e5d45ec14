import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { isInt64Projection } from "./exact-json.ts";

// Contracts compiled from parsed documents, with no file access: what every runtime (Node, a browser, a
// Service Worker) shares. Reading the documents from disk is openapi.ts's job.

export const DOCUMENT_ID = "openapi.yaml";
export const CONTROL_DOCUMENT_ID = "control.openapi.yaml";
// Top-level OpenAPI keys are not JSON Schema keywords; declaring them lets strict ajv load the whole
// document once and resolve every schema by JSON pointer, so no schema is ever copied out of it.
const OPENAPI_ROOT_KEYS = ["openapi", "info", "servers", "security", "tags", "paths", "components"];

export interface OpenApiDocument {
  info: { version: string };
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, SchemaObject>; responses: Record<string, ResponseObject> };
}
export interface SchemaObject {
  properties?: Record<string, SchemaObject>;
  required?: string[];
  [keyword: string]: unknown;
}
export interface OperationObject {
  operationId: string;
  responses: Record<string, ResponseObject | { $ref: string }>;
}
export interface ResponseObject {
  description: string;
  content?: Record<string, { schema: SchemaObject }>;
}

export interface Contract {
  document: OpenApiDocument;
  /** The validator of the schema at a JSON pointer into openapi.yaml, compiled once. */
  validator(pointer: string): ValidateFunction;
  /** Validator of `#/components/schemas/<name>`. */
  schema(name: string): ValidateFunction;
  ajv: Ajv;
}

export interface NamedDocument {
  /** The id other documents' `$ref`s use for it: its file name. */
  id: string;
  document: unknown;
}

/**
 * A contract from parsed documents, with no file access: the primary document's schemas by pointer, the
 * others there for the `$ref`s that cross into them.
 */
export function compileContract(primary: NamedDocument, references: readonly NamedDocument[] = []): Contract {
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats.default(ajv);
  // ajv-formats accepts any integer as int64; values reach us projected so that the bounds can be exact.
  ajv.addFormat("int64", { type: "number", validate: isInt64Projection });
  for (const keyword of OPENAPI_ROOT_KEYS) ajv.addKeyword({ keyword });
  for (const { id, document } of [primary, ...references]) ajv.addSchema(document as object, id);
  const compiled = new Map<string, ValidateFunction>();
  const validator = (pointer: string): ValidateFunction => {
    let validate = compiled.get(pointer);
    if (!validate) {
      validate = ajv.getSchema(`${primary.id}${pointer}`);
      if (!validate) throw new Error(`${primary.id} has no schema at ${pointer}`);
      compiled.set(pointer, validate);
    }
    return validate;
  };
  return {
    document: primary.document as OpenApiDocument,
    ajv,
    validator,
    schema: (name) => validator(`#/components/schemas/${escapePointer(name)}`),
  };
}

export function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}
