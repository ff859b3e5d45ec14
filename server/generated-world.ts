import { WholeFile } from "../common/whole-file.ts";
import { GENERATED_API_KEY, generatedFixtureText, generateOrders } from "./core/generate.ts";
import { SeedBuilder } from "./core/seed.ts";
import type { LoadedFixture } from "./fixtures.ts";

/** A generated world as petstore-mock serves it, keyed with the dev key (replaced by --api-key as for files). */
export function generatedWorld(orders: number, seed: number): LoadedFixture {
  const builder = new SeedBuilder();
  for (const order of generateOrders(orders, seed)) builder.add(order);
  return { apiKeys: [GENERATED_API_KEY], seed: builder.finish() };
}

/**
 * A generated world written as a fixture file, whole: beside the target and renamed into place. A file
 * already there keeps its permissions; a new one is readable by its owner only when it holds keys given
 * with --api-key (with the documented dev key alone, by everyone, as the bundled fixtures are).
 */
export function writeGeneratedFixtures(
  path: string,
  orders: number,
  seed: number,
  apiKeys?: readonly string[],
): void {
  const file = new WholeFile(path, apiKeys && apiKeys.length > 0 ? 0o600 : 0o644);
  try {
    for (const piece of generatedFixtureText(orders, seed, apiKeys)) file.write(piece);
  } catch (error) {
    file.abandon();
    throw error;
  }
  file.commit();
}
