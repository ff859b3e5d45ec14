import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { CONTROL_DOCUMENT_ID, type Contract, compileContract, DOCUMENT_ID } from "./compile.ts";

export {
  type Contract,
  compileContract,
  escapePointer,
  type OpenApiDocument,
  type OperationObject,
  type ResponseObject,
  type SchemaObject,
} from "./compile.ts";

export const OPENAPI_PATH = fileURLToPath(new URL("../openapi.yaml", import.meta.url));
/** The mock's own control API: a document of its own, so that openapi.yaml stays the product's contract. */
export const CONTROL_OPENAPI_PATH = fileURLToPath(new URL("../control.openapi.yaml", import.meta.url));

/** Loads openapi.yaml and prepares a strict ajv that validates values projected by toSchemaView. */
export function loadContract(path: string = OPENAPI_PATH): Contract {
  return compileContract({ id: DOCUMENT_ID, document: readYaml(path) });
}

/** The control API's document, with openapi.yaml beside it for the schemas it refers to. */
export function loadControlContract(): Contract {
  return compileContract({ id: CONTROL_DOCUMENT_ID, document: readYaml(CONTROL_OPENAPI_PATH) }, [
    { id: DOCUMENT_ID, document: readYaml(OPENAPI_PATH) },
  ]);
}

function readYaml(path: string): unknown {
  return parseYaml(readFileSync(path, "utf8"));
}
