import { readFileSync, statSync } from "node:fs";
import type { Contract } from "../contract/contract.ts";
import { type Fixture, FixtureError, parseFixture } from "./core/fixture.ts";

export { type Fixture, FixtureError, parseFixture } from "./core/fixture.ts";

// About 350,000 orders: room for any hand-written or generated world, and junk is refused before it is read.
export const MAX_FIXTURE_BYTES = 32 * 1024 * 1024;

export function loadFixtureFile(path: string, contract: Contract): Fixture {
  let bytes: Buffer;
  try {
    const size = statSync(path).size;
    if (size > MAX_FIXTURE_BYTES) {
      throw new FixtureError(
        `${path}: the file is ${size} bytes; fixture files are limited to ${MAX_FIXTURE_BYTES}`,
      );
    }
    bytes = readFileSync(path);
  } catch (error) {
    if (error instanceof FixtureError) throw error;
    throw new FixtureError(
      `${path}: cannot read the fixture file (${(error as NodeJS.ErrnoException).code ?? error})`,
    );
  }
  return parseFixture(bytes, path, contract);
}
