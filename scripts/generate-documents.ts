import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import standalone from "ajv/dist/standalone/index.js";
import { parse as parseYaml } from "yaml";
import { _, createContractAjv } from "../contract/compile.ts";
import { CONTROL_DOCUMENT_ID, DOCUMENT_ID, schemaPointers } from "../contract/contract.ts";
import { CONTROL_OPENAPI_PATH, OPENAPI_PATH } from "../contract/openapi.ts";
import { BUNDLED_FIXTURES } from "../server/options.ts";

/**
 * Writes what the shipped contracts are built from, so that nothing is parsed or compiled at start-up:
 * contract/documents.generated.ts, both OpenAPI documents as data and the bundled fixtures' text (also for
 * runtimes that cannot read files),
 * and contract/validators.generated.ts, ajv's standalone code for every schema a contract is asked for.
 * The YAML files stay the source; a test fails when either module is stale.
 */
export const DOCUMENTS_MODULE = fileURLToPath(new URL("../contract/documents.generated.ts", import.meta.url));
export const VALIDATORS_MODULE = fileURLToPath(
  new URL("../contract/validators.generated.ts", import.meta.url),
);

const HEADER =
  "// Generated from openapi.yaml and control.openapi.yaml by scripts/generate-documents.ts. Do not edit.";

function readDocuments() {
  return [
    { id: DOCUMENT_ID, document: parseYaml(readFileSync(OPENAPI_PATH, "utf8")) as unknown },
    { id: CONTROL_DOCUMENT_ID, document: parseYaml(readFileSync(CONTROL_OPENAPI_PATH, "utf8")) as unknown },
  ];
}

export function documentsModule(): string {
  const [product, control] = readDocuments();
  const data = (document: unknown) => JSON.stringify(document, null, 2);
  return `${HEADER}
export const openapiDocument: unknown = ${data(product?.document)};

export const controlDocument: unknown = ${data(control?.document)};

/** fixtures/orders.json as text, so that ids above 2^53 survive until the fixture parser reads them. */
export const bundledFixtures = ${JSON.stringify(readFileSync(BUNDLED_FIXTURES, "utf8"))};
`;
}

export function validatorsModule(): string {
  const documents = readDocuments();
  const ajv = createContractAjv(documents, _`formats`);
  const references = documents.flatMap(({ id, document }) =>
    schemaPointers(document).map((pointer) => `${id}${pointer}`),
  );
  const exports = Object.fromEntries(references.map((reference, index) => [`v${index}`, reference]));
  const code = standalone.default(ajv, exports).replace(/^"use strict";/, "");
  // ajv's runtime helpers (string length, deep equality) come as require calls; an ES module imports them.
  const helpers = new Map<string, string>();
  const body = code.replace(
    /require\("(ajv\/dist\/runtime\/[\w]+)"\)\.default/g,
    (_match: string, path: string) => {
      const name = `runtime_${path.split("/").pop()}`;
      helpers.set(name, path);
      return name;
    },
  );
  const imports = [...helpers].map(([name, path]) => `import ${name} from "${path}.js";`).join("\n");
  const table = references.map((reference, index) => `  ${JSON.stringify(reference)}: v${index},`).join("\n");
  return `${HEADER}
// @ts-nocheck
import type { ValidateFunction } from "ajv";
${imports}
import { formats } from "./formats.ts";
${body}

/** Each validator by the reference a contract asks for: a document's id and a JSON pointer into it. */
export const validators: Record<string, ValidateFunction> = {
${table}
};
`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(DOCUMENTS_MODULE, documentsModule());
  writeFileSync(VALIDATORS_MODULE, validatorsModule());
}
