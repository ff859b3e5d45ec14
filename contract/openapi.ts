import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { compileContract } from "./compile.ts";
import { CONTROL_DOCUMENT_ID, type Contract, DOCUMENT_ID } from "./contract.ts";

// The documents as files in this checkout, for tooling and tests; the mock and the suite use the built-in
// contracts (built-in.ts), generated from these very files.

export const OPENAPI_PATH = fileURLToPath(new URL("../openapi.yaml", import.meta.url));
/** The mock's own control API: a document of its own, so that openapi.yaml stays the product's contract. */
export const CONTROL_OPENAPI_PATH = fileURLToPath(new URL("../control.openapi.yaml", import.meta.url));

/** Reads openapi.yaml (or another document) and compiles it with ajv now. */
export function loadContract(path: string = OPENAPI_PATH): Contract {
  return compileContract({ id: DOCUMENT_ID, document: readYaml(path) });
}

/** The control API's document, with openapi.yaml beside it for the schemas it refers to, compiled now. */
export function loadControlContract(): Contract {
  return compileContract({ id: CONTROL_DOCUMENT_ID, document: readYaml(CONTROL_OPENAPI_PATH) }, [
    { id: DOCUMENT_ID, document: readYaml(OPENAPI_PATH) },
  ]);
}

function readYaml(path: string): unknown {
  return parseYaml(readFileSync(path, "utf8"));
}
