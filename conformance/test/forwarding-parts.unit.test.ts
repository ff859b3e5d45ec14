import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { writeFileSync } from "node:fs";
import type { ClientRequest, IncomingMessage } from "node:http";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { tempFolder } from "../../common/temp-folder.ts";
import { builtInContract } from "../../contract/built-in.ts";
import { createVersionedRouter, readOperations } from "../../contract/operations.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { PROXY_OPTION_NAMES } from "../judging/setting-names.ts";
import { CancelsInFlight, CancelTap } from "../proxy/cancels-in-flight.ts";
import { DeadlineSweep } from "../proxy/deadline-sweep.ts";
import type { Exchange } from "../proxy/exchange-lifecycle.ts";
import { HeldAnswer, HeldRoom } from "../proxy/held-answer.ts";
import { SpillFolder } from "../proxy/held-spill.ts";
import { WRITE_OUTSIDE_CONTRACT_IN_FLIGHT } from "../proxy/state-rules/barrier.ts";
import { NotOrdersPaths } from "../proxy/state-rules/not-orders-paths.ts";

// The forwarder's small parts, each on its own: cancels in flight, the deadline sweep, a held answer.

/** A request or answer that records why it was destroyed. */
function destroyable(): EventEmitter & { destroyed?: Error; destroy(error?: Error): void } {
  const target = new EventEmitter() as EventEmitter & { destroyed?: Error; destroy(error?: Error): void };
  target.destroy = (error?: Error) => {
    target.destroyed = error ?? new Error("destroyed");
    target.emit("close");
  };
  return target;
}

/**
 * What an account holds for answers still in flight: the chunks a held answer let go of stay charged until
 * the collector has run (MemoryBudget.letGo), and are not what these tests count.
 */
function live(held: MemoryBudget): number {
  return held.held - held.uncollected;
}

describe("the forwarder's parts", () => {
  it("counts each order's cancels in flight until the last one is answered, by when each was sent", () => {
    const cancels = new CancelsInFlight();
    const id = "9007199254740993";
    cancels.began(id, 10);
    cancels.began(id, 20);
    cancels.ended(id, 10);
    assert.equal(cancels.sentBefore(id, 25), true);
    // Sent after an exchange was over, it cannot have come before it, however late that one is judged.
    assert.equal(cancels.sentBefore(id, 15), false);
    cancels.ended(id, 20);
    assert.equal(cancels.sentBefore(id, 25), false);
  });

  it("counts a write outside the contract as in flight, but not one under a --not-orders path", () => {
    const operations = readOperations(builtInContract());
    const cancels = new CancelsInFlight(new NotOrdersPaths(["/v1/pets"], operations, "--not-orders"));
    const write = (url: string) => {
      const tap = new CancelTap(cancels);
      tap.onRequest({
        method: "POST",
        url,
        routed: undefined,
        startedAt: 1,
        overridden: [],
      } as unknown as Exchange);
      return tap;
    };
    const pets = write("/v1/pets/7?x=1");
    assert.equal(cancels.sentBefore(WRITE_OUTSIDE_CONTRACT_IN_FLIGHT, 2), false);
    const reset = write("/__control/reset");
    assert.equal(cancels.sentBefore(WRITE_OUTSIDE_CONTRACT_IN_FLIGHT, 2), true);
    reset.onFinish();
    pets.onFinish();
    assert.equal(cancels.sentBefore(WRITE_OUTSIDE_CONTRACT_IN_FLIGHT, 2), false);
  });

  it("counts a request with a method override as each method it may have been served as", () => {
    const operations = readOperations(builtInContract());
    const route = createVersionedRouter(operations);
    const cancels = new CancelsInFlight();
    const url = "/v1/store/orders/7";
    const tap = new CancelTap(cancels);
    const overridden = [{ method: "DELETE", routed: route("DELETE", url) }, { method: "PUT" }];
    tap.onRequest({ method: "GET", url, routed: undefined, startedAt: 1, overridden } as unknown as Exchange);
    assert.equal(cancels.sentBefore("7", 2), true, "a cancel of order 7 is in flight");
    assert.equal(
      cancels.sentBefore(WRITE_OUTSIDE_CONTRACT_IN_FLIGHT, 2),
      true,
      "and a write outside the contract",
    );
    tap.onFinish();
    assert.equal(cancels.sentBefore("7", 2), false);
    assert.equal(cancels.sentBefore(WRITE_OUTSIDE_CONTRACT_IN_FLIGHT, 2), false);
  });

  it("destroys a request past its timeout and an answer past its deadline, not one that was answered", async () => {
    const sweep = new DeadlineSweep(40, () => new Error("too slow"));
    try {
      const late = destroyable();
      const answeredInTime = destroyable();
      const slowAnswer = destroyable();
      const longAgo = performance.now() - 10_000;
      sweep.waitFor(answeredInTime as unknown as ClientRequest, longAgo);
      sweep.answered(answeredInTime as unknown as ClientRequest);
      sweep.waitFor(late as unknown as ClientRequest, longAgo);
      sweep.answering(slowAnswer as unknown as IncomingMessage, longAgo);
      while (!late.destroyed || !slowAnswer.destroyed) await sleep(10);
      assert.match(late.destroyed.message, /no answer within 40 ms/);
      assert.equal(slowAnswer.destroyed.message, "too slow");
      assert.equal(answeredInTime.destroyed, undefined);
    } finally {
      sweep.stop();
    }
  });

  it("holds an answer within its limits, and past them writes what it held first and says why", () => {
    const held = new MemoryBudget(1 << 20);
    const client = recordingClient();
    const answer = new HeldAnswer(true, held, 10, PROXY_OPTION_NAMES, client);
    assert.equal(answer.take(Buffer.from("abcd"), 4), true);
    assert.equal(answer.take(Buffer.from("efgh"), 8), true);
    assert.equal(live(held), 10, "one block, reserved up to the body limit it cannot pass");
    assert.equal(
      answer.take(Buffer.from("ijkl"), 12),
      false,
      "past maxBodyBytes: the chunk goes on as it comes",
    );
    assert.equal(client.started, 1);
    assert.deepEqual(client.written, ["abcdefgh"]);
    assert.equal(answer.unheld, "the answer is larger than maxBodyBytes");
    assert.equal(answer.holding, false);
    assert.equal(live(held), 10, "written, not yet taken by the client's connection: still held");
    for (const flushed of client.flushes) flushed();
    assert.equal(live(held), 0);
    assert.equal(answer.take(Buffer.from("mnop"), 16), false);
    assert.equal(client.started, 1);
  });

  it("passes a held answer on as one block, held until the client takes it or goes away", () => {
    const held = new MemoryBudget(1 << 20);
    const client = recordingClient();
    const answer = new HeldAnswer(true, held, 100, PROXY_OPTION_NAMES, client, undefined, 8);
    answer.take(Buffer.from("abcd"), 4);
    answer.take(Buffer.from("efgh"), 8);
    assert.equal(live(held), 8, "the block is the size the upstream gave");
    answer.pass();
    answer.giveBack();
    assert.deepEqual(client.written, ["abcdefgh"]);
    assert.equal(client.ended, 1);
    assert.equal(live(held), 8, "passed on, not yet taken: still held");
    answer.closed();
    assert.equal(live(held), 0, "the connection closed: nothing is held for it");
    client.flushes[0]?.();
    assert.equal(live(held), 0, "a late flush gives back nothing twice");
    held.collect();
    assert.equal(held.held, 0, "once collected, the chunks let go of are given back too");
  });

  it("stops reading a held answer that has no room, and goes on once room frees", async () => {
    const held = new MemoryBudget(256 * 1024);
    const room = new HeldRoom(held, PROXY_OPTION_NAMES);
    const client = recordingClient();
    const answer = new HeldAnswer(true, held, 1 << 20, PROXY_OPTION_NAMES, client, room, 128 * 1024);
    // Another holder holds most of the account: the answer's block of 128 KiB does not fit.
    held.take(200 * 1024);
    const chunk = Buffer.alloc(1024, 0x61);
    assert.equal(answer.take(chunk, 1024), true, "still held, set aside");
    assert.deepEqual(client.pauses, [true], "the upstream is no longer read");
    held.give(200 * 1024);
    while (client.pauses.length < 2) await sleep(5);
    assert.deepEqual(client.pauses, [true, false], "read again once the block fits");
    assert.equal(live(held), 128 * 1024);
    assert.equal(answer.holding, true);
    answer.pass();
    assert.equal(client.written[0]?.length, 1024);
    answer.giveBack();
    room.stop();
  });

  it("lets the held answer holding the most go on before its verdict when every one waits for room", async () => {
    const held = new MemoryBudget(240 * 1024);
    const room = new HeldRoom(held, PROXY_OPTION_NAMES);
    const small = recordingClient();
    const large = recordingClient();
    const smallAnswer = new HeldAnswer(true, held, 1 << 20, PROXY_OPTION_NAMES, small, room);
    const largeAnswer = new HeldAnswer(true, held, 1 << 20, PROXY_OPTION_NAMES, large, room);
    smallAnswer.take(Buffer.alloc(1024), 1024);
    for (let size = 32 * 1024; size <= 128 * 1024; size += 32 * 1024)
      largeAnswer.take(Buffer.alloc(32 * 1024), size);
    // Both blocks are 64 and 128 KiB: neither can double now.
    assert.equal(smallAnswer.take(Buffer.alloc(64 * 1024), 65 * 1024), true);
    assert.equal(largeAnswer.take(Buffer.alloc(1024), 129 * 1024), true);
    assert.deepEqual([small.pauses, large.pauses], [[true], [true]]);
    while (largeAnswer.holding) await sleep(5);
    assert.match(largeAnswer.unheld ?? "", /held 240 KiB of answers in flight together \(maxHeldBytes\)/);
    assert.equal(large.started, 1, "it goes on to its client as it is");
    assert.equal(smallAnswer.holding, true, "the other is still held");
    for (const flushed of large.flushes) flushed();
    while (small.pauses.length < 2) await sleep(5);
    assert.deepEqual(small.pauses, [true, false], "and read again in the room the first left");
    smallAnswer.giveBack();
    room.stop();
  });

  it("holds an answer in memory, as far as the account allows, when no spill folder can be made", () => {
    const tmp = process.env.TMPDIR;
    // A file where the temporary directory should be: no folder can be made under it.
    const notAFolder = join(tempFolder("conformance-no-tmp-"), "file");
    writeFileSync(notAFolder, "");
    process.env.TMPDIR = notAFolder;
    try {
      const held = new MemoryBudget(8 << 20);
      const problems: string[] = [];
      const spills = new SpillFolder(held, (problem) => problems.push(problem));
      const client = recordingClient();
      const room = new HeldRoom(held, PROXY_OPTION_NAMES);
      const answer = new HeldAnswer(true, held, 1 << 30, PROXY_OPTION_NAMES, client, room, undefined, spills);
      for (let size = 256 << 10; size <= 3 << 20; size += 256 << 10)
        assert.equal(answer.take(Buffer.alloc(256 << 10, 0x61), size), true);
      assert.equal(answer.holding, true, "held past the 1 MiB share, in memory");
      assert.deepEqual(client.pauses, []);
      assert.equal(problems.length, 1);
      assert.match(problems[0] ?? "", /cannot make a file to hold answers in: ENOTDIR/);
      answer.pass();
      assert.equal(client.written.join("").length, 3 << 20);
      answer.giveBack();
      room.stop();
    } finally {
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
    }
  });
});

/** A held answer's client that records what it was told. */
function recordingClient() {
  const client = {
    started: 0,
    ended: 0,
    cuts: 0,
    written: [] as string[],
    flushes: [] as Array<() => void>,
    pauses: [] as boolean[],
    start: () => {
      client.started++;
    },
    write: (chunk: Buffer, flushed: () => void) => {
      client.written.push(String(chunk));
      client.flushes.push(flushed);
    },
    end: () => {
      client.ended++;
    },
    cut: () => {
      client.cuts++;
    },
    pause: (paused: boolean) => {
      client.pauses.push(paused);
    },
  };
  return client;
}
