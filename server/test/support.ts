import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { loadContract } from "../../contract/openapi.ts";
import { createServer, type MockServerOptions } from "../app.ts";
import { loadFixtureFile } from "../fixtures.ts";
import { BUNDLED_FIXTURES } from "../options.ts";
import { createStore } from "../store.ts";

export const DEV_KEY = "dev-key-123";
export const AUTH = { authorization: `Bearer ${DEV_KEY}` };
export const contract = loadContract();

/** The mock app in-process on the bundled fixtures, with a store of its own. */
export async function bundledApp(overrides: Partial<MockServerOptions> = {}): Promise<FastifyInstance> {
  const fixture = loadFixtureFile(BUNDLED_FIXTURES, contract);
  return createServer({ store: createStore(fixture.orders), apiKeys: fixture.apiKeys, ...overrides });
}

/** Writes a fixture file into a fresh temporary folder and returns its path. */
export function writeFixture(content: string | Uint8Array | object, name = "fixture.json"): string {
  const path = join(mkdtempSync(join(tmpdir(), "petstore-fixture-")), name);
  const bytes =
    typeof content === "string" || content instanceof Uint8Array ? content : JSON.stringify(content);
  writeFileSync(path, bytes);
  return path;
}
