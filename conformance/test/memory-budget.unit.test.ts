import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { forwardingReserve, MemoryBudget, proxyAccount } from "../judging/memory-budget.ts";

// The account's reserve for the forwarding: chunks already taken by the clients' connections stay in the
// process until collected, and at 64MiB they grew it past the budget + 100 MiB outside the account.

const MiB = 1024 * 1024;

describe("the memory account", () => {
  it("reserves 16 MiB for the forwarding, at most a quarter of the account", () => {
    assert.equal(forwardingReserve(64 * MiB), 16 * MiB);
    assert.equal(forwardingReserve(256 * MiB), 16 * MiB);
    assert.equal(forwardingReserve(MiB), MiB / 4);
  });

  it("gives the traffic the room the reserves leave, and refuses past it", () => {
    const account = proxyAccount(64 * MiB);
    assert.equal(account.held, 16 * MiB);
    assert.equal(account.room, 48 * MiB);
    assert.equal(account.tryTake(48 * MiB), true);
    assert.equal(account.tryTake(1), false, "the rest is the reserve's");
    account.give(48 * MiB);
    account.reserve(MiB);
    assert.equal(account.room, 47 * MiB);
    account.unreserve(MiB);
    assert.deepEqual([account.held, account.room], [16 * MiB, 48 * MiB]);
  });

  it("keeps chunks let go of charged until the collector ran: past an eighth of the room, or when short", () => {
    const account = new MemoryBudget(64 * MiB);
    account.letGo(MiB / 2, false);
    assert.deepEqual([account.held, account.uncollected], [MiB / 2, MiB / 2], "taken, and owed");
    assert.equal(account.tryTake(63 * MiB), true, "room enough: no collection");
    assert.equal(account.tryTake(MiB), false, "short by 1 MiB, and owing less than 1 MiB: no collection");
    account.letGo(MiB / 2, false);
    assert.equal(account.tryTake(MiB / 2), true, "short, owing 1 MiB: collected, then taken");
    assert.equal(account.uncollected, 0);
    account.give(63 * MiB + MiB / 2);
    account.take(MiB * 6);
    account.letGo(MiB * 6);
    assert.equal(account.uncollected, 6 * MiB, "under an eighth of the room");
    account.letGo(2 * MiB, false);
    assert.deepEqual([account.held, account.uncollected], [0, 0], "an eighth of the room: collected");
  });
});
