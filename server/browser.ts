import { CONTROL_DOCUMENT_ID, compileContract, DOCUMENT_ID } from "../contract/compile.ts";
import { controlDocument, openapiDocument } from "../contract/documents.generated.ts";
import { createPetstoreMockWith, type PetstoreMock, type PetstoreMockOptions } from "./core/petstore-mock.ts";

export { petstoreHandlers } from "./adapters/msw.ts";
export type { PetstoreMock, PetstoreMockOptions } from "./core/petstore-mock.ts";

/**
 * The in-process mock for browsers, Service Workers and Storybook: the same as server/in-process.ts, with
 * the contract's documents built in instead of read from files.
 */
export function createPetstoreMock(options: PetstoreMockOptions): PetstoreMock {
  const product = { id: DOCUMENT_ID, document: openapiDocument };
  return createPetstoreMockWith(options, {
    contract: compileContract(product),
    controlContract: compileContract({ id: CONTROL_DOCUMENT_ID, document: controlDocument }, [product]),
  });
}
