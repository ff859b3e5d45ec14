import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { type ExploreTarget, startExploreTarget } from "../../test-support/explore-target.ts";
import { explore } from "../explore/explore.ts";
import type { ConformanceHooks } from "../target/hook-types.ts";
import { HookError } from "../target/hooks.ts";

// A hook that hangs would hang the old search: the bound turns that into a failure, never judged.
const HANG_BOUND = { timeout: 60_000 };
const never = () => new Promise<never>(() => {});

/** Orders from the test backend, a few at a time, as a provision hook gives them. */
function provisionFrom(target: ExploreTarget): NonNullable<ConformanceHooks["provision"]> {
  return (_context, wanted) => target.create(Math.min(wanted.pending, 4), Math.min(wanted.shipped, 2));
}

/** Requests of our own, one after the other: time for a search still playing to send more. */
async function listTimes(target: ExploreTarget, times: number): Promise<void> {
  for (let at = 0; at < times; at++)
    await (
      await fetch(`${target.url}/store/orders`, { headers: { authorization: `Bearer ${target.key}` } })
    ).arrayBuffer();
}

describe("explore when a hook fails or does not return", () => {
  let target: ExploreTarget;
  before(async () => {
    target = await startExploreTarget();
  });
  after(() => target.close());

  it("a release that throws halts every history at once: no step after it, then its error", async () => {
    let releases = 0;
    let deletesAtThrow = -1;
    const run = explore({
      baseUrl: target.url,
      apiKey: target.key,
      hooks: {
        provision: provisionFrom(target),
        release: () => {
          if (++releases !== 2) return;
          deletesAtThrow = target.deletes.length;
          throw new Error("the control API is gone");
        },
      },
      clients: 4,
      parallel: 4,
      seed: 1,
      budgetMs: 30_000,
    });
    await assert.rejects(
      run,
      (error) => error instanceof HookError && /control API is gone/.test(error.message),
    );
    await listTimes(target, 20);
    // Each client of each history had at most one request out when the hook threw.
    const after = target.deletes.length - deletesAtThrow;
    assert.ok(deletesAtThrow >= 0 && after <= 4 * 4, `${after} cancels after the hook threw`);
  });

  it(
    "a provision call that does not return ends the search at the deadline, and fails the run",
    HANG_BOUND,
    async () => {
      let provisions = 0;
      const run = explore({
        baseUrl: target.url,
        apiKey: target.key,
        hooks: {
          provision: (context, wanted) =>
            ++provisions === 1 ? provisionFrom(target)(context, wanted) : never(),
        },
        seed: 1,
        budgetMs: 200,
        timeoutMs: 500,
      });
      await assert.rejects(run, /^HookError: the provision hook did not return within 500 ms/);
    },
  );

  it(
    "a provision call that does not return ends the search at the stop; the report says it",
    HANG_BOUND,
    async () => {
      const stop = new AbortController();
      let provisions = 0;
      const result = await explore({
        baseUrl: target.url,
        apiKey: target.key,
        hooks: {
          provision: (context, wanted) => {
            if (++provisions === 1) return provisionFrom(target)(context, wanted);
            stop.abort("SIGINT");
            return never();
          },
        },
        seed: 1,
        budgetMs: 30_000,
        timeoutMs: 500,
        stop: stop.signal,
      });
      assert.equal(result.interruptedBy, "SIGINT");
      assert.ok(result.warnings.some((warning) => /provision hook did not return/.test(warning)));
    },
  );

  it("a release call that does not return fails a run that found nothing", HANG_BOUND, async () => {
    const run = explore({
      baseUrl: target.url,
      apiKey: target.key,
      hooks: { provision: provisionFrom(target), release: never },
      seed: 1,
      budgetMs: 200,
      timeoutMs: 500,
    });
    await assert.rejects(run, /^HookError: the release hook did not return within 500 ms .*may be left/);
  });

  it(
    "a beforeRun that does not return ends the run at its budget, and at once at a stop",
    HANG_BOUND,
    async () => {
      const options = { baseUrl: target.url, apiKey: target.key, seed: 1 };
      await assert.rejects(
        explore({ ...options, hooks: { beforeRun: never }, budgetMs: 300, timeoutMs: 200 }),
        /^HookError: the beforeRun hook did not return within the run's budgetMs and request timeout \(500 ms\)$/,
      );
      const stop = new AbortController();
      const stopped = explore({
        ...options,
        hooks: { beforeRun: never },
        budgetMs: 600_000,
        stop: stop.signal,
      });
      setTimeout(() => stop.abort("SIGTERM"), 100);
      await assert.rejects(
        stopped,
        /^HookError: the beforeRun hook had not returned when the run was stopped$/,
      );
    },
  );
});

/**
 * A store whose cancel leaves an order pending for 3 ms after its 204 (a check-then-act): two cancels
 * close together both answer 204. Copied from the review's script, with a flag once that happened.
 */
async function doubleCancelStore(): Promise<{
  url: string;
  provision: NonNullable<ConformanceHooks["provision"]>;
  doubled: () => boolean;
  close: () => void;
}> {
  const status = new Map<string, string>();
  const answered204 = new Set<string>();
  let doubled = false;
  let next = 100;
  const server: Server = createServer((request, response) => {
    const json = (code: number, body: unknown) =>
      response.writeHead(code, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (request.headers.authorization !== "Bearer store-key")
      return json(401, { code: "u", message: "u", status: 401 });
    if (request.method === "GET" && request.url === "/v1/store/orders")
      return json(
        200,
        [...status]
          .filter(([, s]) => s !== "gone")
          .map(([id]) => ({ id: Number(id), petId: 1, quantity: 1 })),
      );
    const id = /^\/v1\/store\/orders\/(\d+)$/.exec(request.url ?? "")?.[1];
    if (request.method !== "DELETE" || id === undefined) return response.writeHead(404).end();
    const now = status.get(id);
    if (now === "pending") {
      if (answered204.has(id)) doubled = true;
      answered204.add(id);
      setTimeout(() => status.set(id, "cancelled"), 3);
      return response.writeHead(204).end();
    }
    const code = now === "cancelled" || now === "shipped" ? 409 : 404;
    return json(code, { code: "x", message: "x", status: code });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const make = (count: number, kind: string) =>
    Array.from({ length: count }, () => {
      const id = String(next++);
      status.set(id, kind);
      return id;
    });
  return {
    url: `http://127.0.0.1:${port}/v1`,
    provision: (_context, wanted) => ({
      pending: make(wanted.pending, "pending"),
      shipped: make(wanted.shipped, "shipped"),
    }),
    doubled: () => doubled,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe("explore when a hook fails once it has a finding", () => {
  it("a release that throws while the finding is shrunk or replayed: the finding stands, the error a warning", async () => {
    const store = await doubleCancelStore();
    try {
      let releasesSinceDoubled = 0;
      const result = await explore({
        baseUrl: store.url,
        apiKey: "store-key",
        hooks: {
          provision: store.provision,
          release: () => {
            if (store.doubled() && ++releasesSinceDoubled >= 3) throw new Error("the control API is gone");
          },
        },
        seed: 1,
        budgetMs: 20_000,
        shrinkBudgetMs: 5000,
      });
      assert.ok(store.doubled(), "the store never answered two 204s for one order");
      assert.ok(result.finding, "the finding was thrown away");
      assert.ok(
        result.warnings.some((warning) => /release hook failed: the control API is gone/.test(warning)),
      );
    } finally {
      store.close();
    }
  });

  it(
    "a release call that does not return at the end: the finding stands, the hook's problem a warning",
    HANG_BOUND,
    async () => {
      const store = await doubleCancelStore();
      try {
        const result = await explore({
          baseUrl: store.url,
          apiKey: "store-key",
          hooks: { provision: store.provision, release: never },
          seed: 1,
          budgetMs: 20_000,
          shrinkBudgetMs: 2000,
          timeoutMs: 500,
        });
        assert.ok(result.finding);
        assert.ok(
          result.warnings.some((warning) => /release hook did not return within 500 ms/.test(warning)),
        );
      } finally {
        store.close();
      }
    },
  );
});
