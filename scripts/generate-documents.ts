import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { CONTROL_OPENAPI_PATH, OPENAPI_PATH } from "../contract/openapi.ts";

/**
 * Writes contract/documents.generated.ts: both OpenAPI documents as data, for runtimes that cannot read
 * files (a browser, a Service Worker). The YAML files stay the source; a test fails when this is stale.
 */
export const DOCUMENTS_MODULE = fileURLToPath(new URL("../contract/documents.generated.ts", import.meta.url));

export function documentsModule(): string {
  const data = (path: string) => JSON.stringify(parseYaml(readFileSync(path, "utf8")), null, 2);
  return `// Generated from openapi.yaml and control.openapi.yaml by scripts/generate-documents.ts. Do not edit.
export const openapiDocument: unknown = ${data(OPENAPI_PATH)};

export const controlDocument: unknown = ${data(CONTROL_OPENAPI_PATH)};
`;
}

if (import.meta.url === `file://${process.argv[1]}`) writeFileSync(DOCUMENTS_MODULE, documentsModule());
