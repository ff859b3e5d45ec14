import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { PROXY_OPTION_NAMES } from "../judging/setting-names.ts";
import { HeldAnswer } from "../proxy/held-answer.ts";

const MiB = 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;

const quietClient = { start: () => {}, write: () => {}, end: () => {}, cut: () => {}, pause: () => {} };

describe("held-answer", () => {
  it("the chunks it copies are charged until the collector frees them: the buffers stay within the account", async () => {
    // A socket's chunk lives on after its bytes were copied, until the collector frees it, and V8 lets tens
    // of MiB of them wait: uncharged, they were memory beside the account.
    const held = new MemoryBudget(32 * MiB);
    const answer = new HeldAnswer(true, held, 1 << 30, PROXY_OPTION_NAMES, quietClient);
    const before = process.memoryUsage().arrayBuffers;
    let size = 0;
    let worst = 0;
    while (size < 24 * MiB) {
      // A fresh chunk each time, as a socket gives them.
      const chunk = Buffer.alloc(CHUNK_BYTES, size & 0xff);
      size += chunk.length;
      assert.equal(answer.take(chunk, size), true);
      await nextTurn();
      worst = Math.max(worst, process.memoryUsage().arrayBuffers - before - held.held);
    }
    assert.ok(
      worst <= 2 * MiB,
      `the process held ${(worst / MiB).toFixed(1)} MiB of buffers beyond the account`,
    );
    answer.giveBack();
    held.collect();
    assert.equal(held.held, 0);
  });
});
