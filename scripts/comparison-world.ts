import { parseArgs } from "node:util";
import { loadContract } from "../contract/openapi.ts";
import type { StoredOrder } from "../server/core/order-record.ts";
import { createStore, type Store } from "../server/core/store.ts";
import { loadFixtureFile } from "../server/fixtures.ts";

/**
 * What every comparison server of the benchmark starts from: `--fixtures FILE` and `--port N`, the
 * fixture's orders in a Store (so the bytes served are the mock's own), and the line the bench waits for.
 */
export async function loadComparisonWorld(): Promise<{
  apiKeys: string[];
  /** The fixture's orders, for servers that build worlds of their own. */
  orders: readonly StoredOrder[];
  store: Store;
  port: number;
  announce(name: string, port: number): void;
}> {
  const { values } = parseArgs({ options: { fixtures: { type: "string" }, port: { type: "string" } } });
  if (!values.fixtures) throw new Error("--fixtures FILE is required");
  const { apiKeys, seed } = await loadFixtureFile(values.fixtures, loadContract());
  return {
    apiKeys,
    orders: [...seed.all()],
    store: createStore(seed),
    port: Number(values.port ?? 0),
    announce(name, port) {
      process.stdout.write(`${name} listening on http://127.0.0.1:${port}/v1\n`);
    },
  };
}
