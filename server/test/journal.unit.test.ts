import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { journalPath, MAX_JOURNAL_PATH } from "../core/journal.ts";
import type { MemoryState } from "../core/memory-state.ts";
import { bundledCore, DEV_KEY } from "./support.ts";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const heapAfterCollection = () => {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
};

describe("journal", () => {
  it("keeps a long path cut after its limit, marked", () => {
    const long = `/v1/${"x".repeat(2 * MAX_JOURNAL_PATH)}`;
    assert.equal(journalPath(long), `${long.slice(0, MAX_JOURNAL_PATH)}...`);
    assert.equal(journalPath("/v1/store/orders"), "/v1/store/orders");
  });

  it("entries hold their own paths, not the URLs they came in: requests with huge queries cost what is counted", () => {
    const core = bundledCore({ maxSessionBytes: 16 * 1024 * 1024 });
    const sessions = 8;
    const requests = 1_000;
    const query = "q".repeat(15 * 1024);
    const before = heapAfterCollection();
    for (let session = 0; session < sessions; session++) {
      for (let index = 0; index < requests; index++) {
        const url = `/v1/store/orders/${index}?${query}${index}`;
        core.handle({
          method: "DELETE",
          url,
          headers: { authorization: `Bearer ${DEV_KEY}`, "x-mock-session": `s${session}` },
        });
      }
    }
    const grown = heapAfterCollection() - before;
    const state = core.state as MemoryState;
    const counted = state.memorySessions
      .list(Date.now())
      .reduce((sum, world) => sum + (world.heldBytes ?? 0), 0);
    assert.equal(state.memorySessions.size, sessions, "all within the budget as counted");
    assert.equal(
      (state.memorySessions.list(Date.now())[0]?.journal() ?? []).length,
      requests,
      "every request journaled",
    );
    // Kept slices would hold the 15 KiB URLs of all 8,000 entries: over 120 MiB.
    assert.ok(
      grown < counted + 32 * 1024 * 1024,
      `the heap grew ${grown} bytes for ${counted} counted in the sessions`,
    );
  });
});
