import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { PROXY_OPTION_NAMES } from "../judging/setting-names.ts";
import { HeldAnswer } from "../proxy/held-answer.ts";
import { SpillFolder } from "../proxy/held-spill.ts";

const MiB = 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;

describe("held-answer", () => {
  it("the chunks it sets aside are charged until the collector frees them: the buffers stay within the account", async () => {
    // A socket's chunk lives on after its bytes went to the file, until the collector frees it, and V8
    // lets tens of MiB of them wait: uncharged, they were memory beside the account.
    const held = new MemoryBudget(32 * MiB);
    const spills = new SpillFolder(held);
    let paused = false;
    const client = {
      start: () => {},
      write: () => {},
      end: () => {},
      cut: () => {},
      pause: (pausing: boolean) => {
        paused = pausing;
      },
    };
    const answer = new HeldAnswer(
      true,
      held,
      1 << 30,
      PROXY_OPTION_NAMES,
      client,
      undefined,
      undefined,
      spills,
    );
    const before = process.memoryUsage().arrayBuffers;
    let size = 0;
    let worst = 0;
    while (size < 24 * MiB) {
      // A fresh chunk each time, as a socket gives them, taken only while the answer reads.
      const chunk = Buffer.alloc(CHUNK_BYTES, size & 0xff);
      size += chunk.length;
      assert.equal(answer.take(chunk, size), true);
      do await sleep(1);
      while (paused);
      worst = Math.max(worst, process.memoryUsage().arrayBuffers - before - held.held);
    }
    // What a collection gave back may still be being swept for a moment: up to an eighth of the room.
    assert.ok(
      worst <= 6 * MiB,
      `the process held ${(worst / MiB).toFixed(1)} MiB of buffers beyond the account`,
    );
    answer.giveBack();
    spills.stop();
  });
});
