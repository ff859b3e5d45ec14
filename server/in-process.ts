import { loadContract, loadControlContract } from "../contract/openapi.ts";
import { createPetstoreMockWith, type PetstoreMock, type PetstoreMockOptions } from "./core/petstore-mock.ts";

export type { PetstoreMock, PetstoreMockOptions } from "./core/petstore-mock.ts";

/**
 * The mock in-process, for tests without a server: the same rules as `npm start`, answering Web
 * `Request`s. `fixtures` is a fixture file's content: its JSON text (ids above 2^53 survive) or the parsed
 * object (ids are then what JSON.parse made of them).
 */
export function createPetstoreMock(options: PetstoreMockOptions): PetstoreMock {
  return createPetstoreMockWith(options, {
    contract: loadContract(),
    controlContract: loadControlContract(),
  });
}
