import { CONTROL_DOCUMENT_ID, type Contract, contractOf, DOCUMENT_ID } from "./contract.ts";
import { controlDocument, openapiDocument } from "./documents.generated.ts";
import { validators } from "./validators.generated.ts";

// The contracts as shipped: both documents and their validators compiled ahead of time from openapi.yaml and
// control.openapi.yaml (scripts/generate-documents.ts; a test fails when either is stale). Nothing is parsed
// or compiled at start-up, and no code is generated at run time, so a strict CSP can run them too.

const lookup = (reference: string) => validators[reference];

let product: Contract | undefined;
let control: Contract | undefined;

/** The product's contract, openapi.yaml. */
export function builtInContract(): Contract {
  product ??= contractOf({ id: DOCUMENT_ID, document: openapiDocument }, lookup);
  return product;
}

/** The mock's control API, control.openapi.yaml. */
export function builtInControlContract(): Contract {
  control ??= contractOf({ id: CONTROL_DOCUMENT_ID, document: controlDocument }, lookup);
  return control;
}
