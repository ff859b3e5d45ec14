import { fileMode, WholeFile } from "../common/whole-file.ts";
import { halvesOfBigint, halvesOfNumber } from "../contract/int64-index.ts";
import {
  GENERATED_API_KEY,
  generatedFixtureText,
  generatedRecordJson,
  generatedValues,
} from "./core/generate.ts";
import { SeedBuilder } from "./core/seed.ts";
import type { LoadedFixture } from "./fixtures.ts";

/** A generated world as petstore-mock serves it, keyed with the dev key (replaced by --api-key as for files). */
export function generatedWorld(orders: number, seed: number): LoadedFixture {
  // A generated record takes 86 to 100 bytes: room for all of them at once, rather than doubling copies.
  const builder = new SeedBuilder(undefined, orders * 100);
  for (const order of generatedValues(orders, seed)) {
    const halves = typeof order.id === "number" ? halvesOfNumber(order.id) : halvesOfBigint(order.id);
    builder.addJson(halves, generatedRecordJson(order), order.status);
  }
  return { apiKeys: [GENERATED_API_KEY], seed: builder.finish() };
}

/** What writing the fixture file did to its permissions, for petstore-mock to say. */
export interface WrittenFixtures {
  /** The mode of the file that was there, when a secret key made it 0600 rather than keep it. */
  tightenedFrom?: number;
}

/**
 * A generated world written as a fixture file, whole: beside the target and renamed into place. A new file
 * is readable by its owner only when it holds keys given with --api-key (with the documented dev key alone,
 * by everyone, as the bundled fixtures are). A file already there keeps its permissions, unless a key other
 * than the dev key would land in a file its group or others can read: then it becomes 0600.
 */
export function writeGeneratedFixtures(
  path: string,
  orders: number,
  seed: number,
  apiKeys?: readonly string[],
): WrittenFixtures {
  const secret = apiKeys?.some((key) => key !== GENERATED_API_KEY) ?? false;
  const before = fileMode(path);
  const tighten = secret && before !== undefined && (before & 0o044) !== 0;
  const file = new WholeFile(
    path,
    apiKeys && apiKeys.length > 0 ? 0o600 : 0o644,
    tighten ? "replace" : "keep",
  );
  try {
    for (const piece of generatedFixtureText(orders, seed, apiKeys)) file.write(piece);
  } catch (error) {
    file.abandon();
    throw error;
  }
  file.commit();
  return tighten ? { tightenedFrom: before } : {};
}
