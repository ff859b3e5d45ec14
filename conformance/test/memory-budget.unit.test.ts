import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { forwardingReserve, proxyAccount } from "../judging/memory-budget.ts";

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
});
