import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
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
 * A generated world written as a fixture file: into a new file of a random name beside the target, then
 * renamed over it, so that the name only ever holds a whole file.
 */
export async function writeGeneratedFixtures(
  path: string,
  orders: number,
  seed: number,
  apiKeys?: readonly string[],
): Promise<void> {
  const temporary = join(dirname(path), `.${randomBytes(8).toString("hex")}.tmp`);
  const handle = await open(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    for (const piece of generatedFixtureText(orders, seed, apiKeys)) await handle.write(piece);
    await handle.sync();
    await handle.close();
    await rename(temporary, path);
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(temporary).catch(() => {});
    throw error;
  }
}
