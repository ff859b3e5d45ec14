import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { createOrderSupply, type OrderSupply } from "../explore/orders.ts";
import { Player } from "../explore/player.ts";
import type { Program } from "../explore/program.ts";
import { noCoverage, type SearchSettings } from "../explore/search.ts";
import { HookError } from "../target/hooks.ts";
import { createHttpClient } from "../target/http-client.ts";
import { testDriver } from "./explore-test-driver.ts";

const KEY = "player-key";
const ORDER = "7001";

/**
 * A store that answers 204 to every cancel of its one order (two 204s: a failure), and whose control API
 * fails as the second cancel comes: `broken` is aborted with the hook's error before that cancel is answered.
 */
async function storeThatBreaksAtTheSecondCancel(): Promise<{
  url: URL;
  broken: AbortController;
  close(): void;
}> {
  const broken = new AbortController();
  let cancels = 0;
  const server: Server = createServer((request, response) => {
    if (request.headers.authorization !== `Bearer ${KEY}`) return response.writeHead(401).end();
    if (request.method === "DELETE") {
      if (++cancels === 2) broken.abort(new HookError("the release hook failed: the control API is gone"));
      return response.writeHead(204).end();
    }
    response
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify([{ id: Number(ORDER), petId: 1, quantity: 1 }]));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/v1`),
    broken,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

function oneOrderSupply(broken: AbortSignal): OrderSupply {
  return {
    pending: async (count) => (count === 0 ? [] : [ORDER]),
    shipped: async () => [],
    missing: [],
    hasShipped: false,
    pendingLimit: 1,
    release: async () => {
      broken.throwIfAborted();
    },
    settle: async () => {},
    broken,
    used: 1,
  };
}

const settings: SearchSettings = {
  seed: 1,
  shape: { clients: 2, steps: 3, maxWaitMs: 0, slots: { kinds: ["pending"] } },
  budgetMs: 5000,
  shrinkBudgetMs: 0,
  replays: 1,
  finalReplays: 1,
  allowStaleMs: 0,
  parallel: 1,
  hookGraceMs: 1000,
};

describe("explore's player when a hook fails while a history is played", () => {
  it("judges the steps answered before the halt: two 204s for one order stand as a finding", async () => {
    const store = await storeThatBreaksAtTheSecondCancel();
    const client = await createHttpClient(store.url, { timeoutMs: 5000 });
    try {
      const driver = testDriver(client, KEY);
      // Both clients cancel the one order at once; the second then lists, a step the halt cuts off.
      const program: Program = [
        [{ wait: 0, action: { op: "cancel", slot: 0 } }],
        [
          { wait: 0, action: { op: "cancel", slot: 0 } },
          { wait: 20, action: { op: "list" } },
        ],
      ];
      const coverage = noCoverage();
      const player = new Player(driver, oneOrderSupply(store.broken.signal), settings, coverage);
      const played = await player.play(program);
      assert.ok(played, "the history was thrown away with the hook's error");
      assert.deepEqual(
        played.history.operations.map((operation) => [operation.op, operation.status]),
        [
          ["cancel", 204],
          ["cancel", 204],
        ],
        "the list after the halt was sent",
      );
      assert.equal(played.verdict.ok, false);
      assert.ok(player.failure instanceof HookError, "the run did not halt with the hook's error");
      assert.equal(coverage.histories, 1);
    } finally {
      client.close();
      store.close();
    }
  });
});

/** A store that answers 204 to every cancel. */
async function storeThatCancelsAll(): Promise<{ url: URL; close(): void }> {
  const server: Server = createServer((_request, response) => response.writeHead(204).end());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/v1`),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe("explore's player with many histories at once", () => {
  it("lets every one of them wait for the provision hook's orders without a warning of a leak", async () => {
    const PARALLEL = 16;
    const store = await storeThatCancelsAll();
    const client = await createHttpClient(store.url, { timeoutMs: 5000 });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      let next = 8000;
      // Every history asks for orders as playMany starts it, before this hook's first call returns.
      const provision = async (_context: unknown, wanted: { pending: number }) => {
        await new Promise((resolve) => setImmediate(resolve));
        return { pending: Array.from({ length: wanted.pending }, () => String(next++)) };
      };
      const context = { baseUrl: store.url.href, apiKey: KEY, fetch };
      const supply = createOrderSupply({ pending: [], shipped: [], missing: [] }, { provision }, context, []);
      const many = { ...settings, parallel: PARALLEL, stop: new AbortController().signal };
      const player = new Player(testDriver(client, KEY), supply, many, noCoverage());
      const program: Program = [[{ wait: 0, action: { op: "cancel", slot: 0 } }]];
      const played = await player.playMany(program, PARALLEL);
      await supply.settle();
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(played.filter((history) => history?.verdict.ok).length, PARALLEL);
      assert.deepEqual(
        warnings.map((warning) => warning.name),
        [],
        "a warning was printed while the histories waited",
      );
    } finally {
      process.off("warning", onWarning);
      client.close();
      store.close();
    }
  });
});
