import { _, Ajv, type Code } from "ajv";
import addFormats from "ajv-formats";
import { type Contract, contractOf, type NamedDocument } from "./contract.ts";
import { INT64_FORMAT } from "./formats.ts";

// Contracts compiled by ajv at run time: for the ahead-of-time build itself, and for documents other than the
// built-in ones (tests of the compilation). The mock and the suite use built-in.ts instead.

// Top-level OpenAPI keys are not JSON Schema keywords; declaring them lets strict ajv load the whole
// document once and resolve every schema by JSON pointer, so no schema is ever copied out of it.
const OPENAPI_ROOT_KEYS = ["openapi", "info", "servers", "security", "tags", "paths", "components"];

/**
 * One ajv holding every document, strict, with every error and the exact int64 format. With `formats`, the
 * validators are compiled for standalone code that looks formats up in that expression.
 */
export function createContractAjv(documents: readonly NamedDocument[], formats?: Code): Ajv {
  const ajv = new Ajv({
    strict: true,
    allErrors: true,
    ...(formats ? { code: { source: true, esm: true, formats } } : {}),
  });
  addFormats.default(ajv);
  ajv.addFormat("int64", INT64_FORMAT);
  for (const keyword of OPENAPI_ROOT_KEYS) ajv.addKeyword({ keyword });
  for (const { id, document } of documents) ajv.addSchema(document as object, id);
  return ajv;
}

/**
 * A contract from parsed documents, compiled now: the primary document's schemas by pointer, the others there
 * for the `$ref`s that cross into them.
 */
export function compileContract(primary: NamedDocument, references: readonly NamedDocument[] = []): Contract {
  const ajv = createContractAjv([primary, ...references]);
  return contractOf(primary, (reference) => ajv.getSchema(reference));
}

export { _ };
