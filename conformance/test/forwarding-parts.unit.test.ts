import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { ClientRequest, IncomingMessage } from "node:http";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { PROXY_OPTION_NAMES } from "../judging/setting-names.ts";
import { CancelsInFlight } from "../proxy/cancels-in-flight.ts";
import { DeadlineSweep } from "../proxy/deadline-sweep.ts";
import { HeldAnswer } from "../proxy/held-answer.ts";

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

describe("the forwarder's parts", () => {
  it("counts each order's cancels in flight until the last one is answered", () => {
    const cancels = new CancelsInFlight();
    cancels.began("9007199254740993");
    cancels.began("9007199254740993");
    cancels.ended("9007199254740993");
    assert.equal(cancels.has("9007199254740993"), true);
    cancels.ended("9007199254740993");
    assert.equal(cancels.has("9007199254740993"), false);
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
    const held = new MemoryBudget(1024);
    const written: string[] = [];
    const flushes: Array<() => void> = [];
    let started = 0;
    const answer = new HeldAnswer(true, held, 10, PROXY_OPTION_NAMES, {
      start: () => started++,
      write: (chunk, flushed) => {
        written.push(String(chunk));
        flushes.push(flushed);
      },
      end: () => {},
    });
    assert.equal(answer.take(Buffer.from("abcd"), 4), true);
    assert.equal(answer.take(Buffer.from("efgh"), 8), true);
    assert.equal(held.held, 8);
    assert.equal(
      answer.take(Buffer.from("ijkl"), 12),
      false,
      "past maxBodyBytes: the chunk goes on as it comes",
    );
    assert.equal(started, 1);
    assert.deepEqual(written, ["abcd", "efgh"]);
    assert.equal(answer.unheld, "the answer is larger than maxBodyBytes");
    assert.equal(answer.holding, false);
    assert.equal(held.held, 8, "written, not yet taken by the client's connection: still held");
    for (const flushed of flushes) flushed();
    assert.equal(held.held, 0);
    assert.equal(answer.take(Buffer.from("mnop"), 16), false);
    assert.equal(started, 1);
  });

  it("passes a held answer on chunk by chunk, held until the client takes it or goes away", () => {
    const held = new MemoryBudget(1024);
    const written: string[] = [];
    const flushes: Array<() => void> = [];
    let ended = 0;
    const answer = new HeldAnswer(true, held, 100, PROXY_OPTION_NAMES, {
      start: () => {},
      write: (chunk, flushed) => {
        written.push(String(chunk));
        flushes.push(flushed);
      },
      end: () => ended++,
    });
    answer.take(Buffer.from("abcd"), 4);
    answer.take(Buffer.from("efgh"), 8);
    answer.pass();
    answer.giveBack();
    assert.deepEqual(written, ["abcd", "efgh"], "as they came, not copied into one");
    assert.equal(ended, 1);
    assert.equal(held.held, 8, "passed on, not yet taken: still held");
    flushes[0]?.();
    assert.equal(held.held, 4);
    answer.closed();
    assert.equal(held.held, 0, "the connection closed: nothing is held for it");
    flushes[1]?.();
    assert.equal(held.held, 0, "a late flush gives back nothing twice");
  });
});
