import { builtInContract, builtInControlContract } from "../contract/built-in.ts";
import { bundledFixtures } from "../contract/documents.generated.ts";
import { createPetstoreMockWith, type PetstoreMock, type PetstoreMockOptions } from "./core/petstore-mock.ts";

export type { PetstoreMock, PetstoreMockOptions } from "./core/petstore-mock.ts";

/**
 * The mock in-process, for tests without a server: the same rules as `petstore-mock`, answering Web
 * `Request`s, on the bundled fixtures unless `fixtures` gives a fixture file's content or `generate` asks
 * for a generated world.
 */
export function createPetstoreMock(options: PetstoreMockOptions = {}): PetstoreMock {
  return createPetstoreMockWith(
    options.generate ? options : { ...options, fixtures: options.fixtures ?? bundledFixtures },
    {
      contract: builtInContract(),
      controlContract: builtInControlContract(),
    },
  );
}
