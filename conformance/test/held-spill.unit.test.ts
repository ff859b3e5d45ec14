import assert from "node:assert/strict";
import { readdirSync, readlinkSync, statSync } from "node:fs";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { PROXY_OPTION_NAMES } from "../judging/setting-names.ts";
import { HeldAnswer } from "../proxy/held-answer.ts";
import { type HeldSpill, SpillFolder } from "../proxy/held-spill.ts";

const noListener = { written: () => {}, failed: () => {} };

/** Reads a spill back through a sink that takes each chunk at once (or later, when `slow`). */
function readBack(spill: HeldSpill, slow = false): Promise<{ bytes: Buffer; error?: string }> {
  const parts: Buffer[] = [];
  return new Promise((resolve) => {
    spill.replay(
      {
        write: (chunk, _charged, flushed) => {
          // A copy: the spill reuses its buffer once the chunk is flushed.
          parts.push(Buffer.from(chunk));
          if (slow) setTimeout(flushed, 1);
          else setImmediate(flushed);
        },
      },
      (error) => resolve({ bytes: Buffer.concat(parts), ...(error === undefined ? {} : { error }) }),
    );
  });
}

/** The descriptors of this process open on files of `folder`. */
function openIn(folder: string): string[] {
  const links: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(folder)) links.push(target);
    } catch {
      // Closed while listed.
    }
  }
  return links;
}

describe("held-spill", () => {
  it("gives back the bytes appended, in order, whatever their chunks, and nothing stays held", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 200_000 }), { maxLength: 12 }),
        fc.boolean(),
        async (chunks, slow) => {
          const held = new MemoryBudget(64 << 20);
          const folder = new SpillFolder(held);
          const spill = folder.spill(noListener);
          assert.ok(spill);
          for (const chunk of chunks) spill.append(Buffer.from(chunk));
          const { bytes, error } = await readBack(spill, slow);
          assert.equal(error, undefined);
          assert.deepEqual(bytes, Buffer.concat(chunks.map((chunk) => Buffer.from(chunk))));
          assert.equal(held.held, held.uncollected, "the backlog and the read buffers went back");
          held.collect();
          assert.equal(held.held, 0, "once collected, nothing is owed");
          assert.equal(folder.open, 0);
          folder.stop();
        },
      ),
      { numRuns: 25 },
    );
  });

  it("makes its files 0600 in a folder of its own, both unlinked at once: a kill leaves nothing on disk", async () => {
    const held = new MemoryBudget(64 << 20);
    const folder = new SpillFolder(held);
    const spill = folder.spill(noListener);
    assert.ok(spill);
    // This spill's own descriptor: an earlier test's file may still be closing.
    const path = readlinkSync(`/proc/self/fd/${spill.fd}`);
    assert.match(path, /\/petstore-proxy-held-/, "the file is open");
    // Unlinked at once: the descriptor is all that keeps it.
    assert.match(path, / \(deleted\)$/);
    const fileMode = statSync(`/proc/self/fd/${spill.fd}`).mode & 0o777;
    assert.equal(fileMode, 0o600);
    const directory = path.replace(/\/[^/]+ \(deleted\)$/, "");
    // What a SIGKILL would leave now: nothing, the file in use all the same.
    assert.throws(() => statSync(directory), /ENOENT/, "the folder is removed while the file is in use");
    spill.append(Buffer.from("held"));
    assert.deepEqual((await readBack(spill)).bytes, Buffer.from("held"));
    folder.stop();
    assert.equal(folder.spill(noListener), undefined, "no file once stopped");
  });

  it("holds its backlog in the account until written, and closes its file when disposed mid-way", async () => {
    const held = new MemoryBudget(64 << 20);
    const folder = new SpillFolder(held);
    let written = 0;
    const spill = folder.spill({ written: () => written++, failed: () => {} });
    assert.ok(spill);
    spill.append(Buffer.alloc(300_000, 1));
    assert.equal(held.held, 300_000, "charged before it is written");
    while (spill.backlog > 0) await sleep(1);
    assert.ok(written > 0);
    assert.equal(held.uncollected, 300_000, "written, its chunk is owed until the collector ran");
    held.collect();
    assert.equal(held.held, 0);
    spill.append(Buffer.alloc(1000, 2));
    spill.dispose();
    assert.equal(held.held, held.uncollected, "what never reached the file goes back");
    assert.equal(folder.open, 0);
    folder.stop();
  });

  it("closes its file when disposed while read back to a client that stopped taking", async () => {
    const held = new MemoryBudget(64 << 20);
    const folder = new SpillFolder(held);
    const spill = folder.spill(noListener);
    assert.ok(spill);
    spill.append(Buffer.alloc(1 << 20, 3));
    let handed = 0;
    spill.replay({ write: () => handed++ }, () => assert.fail("never ends: the client took nothing"));
    while (handed < 4) await sleep(1);
    await sleep(20);
    assert.equal(handed, 4, "no more than its four buffers are handed on unflushed");
    spill.dispose();
    assert.equal(held.held, held.uncollected);
    const stillOpen = () => openIn("/").some((target) => target.includes("/petstore-proxy-held-"));
    for (let waited = 0; stillOpen() && waited < 2000; waited += 5) await sleep(5);
    assert.equal(stillOpen(), false, "the file is closed");
    folder.stop();
  });

  it("a held answer let go of while its file is read back keeps what came after the file, to the last byte", async () => {
    // Past the budget's bound with part of it in a file: its last chunk waits to follow the file; the
    // upstream ends and the exchange gives the answer back before the file is read back.
    const held = new MemoryBudget(64 * 1024 * 1024);
    const spills = new SpillFolder(held);
    let sent = 0;
    let ended = false;
    const client = {
      start: () => {},
      write: (chunk: Buffer, flushed: () => void) => {
        sent += chunk.length;
        setImmediate(flushed);
      },
      end: () => {
        ended = true;
      },
      cut: () => {},
      pause: () => {},
    };
    const answer = new HeldAnswer(
      true,
      held,
      2 * 1024 * 1024,
      PROXY_OPTION_NAMES,
      client,
      undefined,
      undefined,
      spills,
    );
    let size = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    while (size + chunk.length <= 2 * 1024 * 1024) {
      size += chunk.length;
      answer.take(chunk, size);
    }
    size += 1000;
    assert.equal(answer.take(Buffer.alloc(1000, 0x42), size), true);
    answer.upstreamEnded();
    answer.giveBack();
    while (!ended) await sleep(5);
    assert.equal(sent, size);
    assert.equal(held.held, held.uncollected);
    spills.stop();
  });

  it("says a folder it cannot make once, and makes no file", () => {
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = "/nonexistent/petstore-spill";
    try {
      const problems: string[] = [];
      const folder = new SpillFolder(new MemoryBudget(), (problem) => problems.push(problem));
      assert.equal(folder.spill(noListener), undefined);
      assert.equal(folder.spill(noListener), undefined);
      assert.equal(problems.length, 1);
      assert.match(problems[0] ?? "", /cannot make a file to hold answers in: ENOENT/);
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
    }
  });
});
