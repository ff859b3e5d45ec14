import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
// The package's own export, as a test suite of another project imports it.
import { ControlError, createControlClient } from "petstore-store-orders-mock/control-client";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { DEV_KEY } from "./support.ts";

describe("createControlClient against the real process", () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());

  const cancel = (id: string, session: string) =>
    fetch(`${mock.url}/store/orders/${id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${DEV_KEY}`, "x-mock-session": session },
    }).then((response) => response.status);

  it("reads and arranges a session's orders, ids exact beyond 2^53", async () => {
    const client = createControlClient(mock.url, { session: "client-orders" });
    const orders = await client.orders();
    assert.equal(orders.length, 12);
    assert.deepEqual(
      orders.filter((order) => order.id.length > 15).map((order) => [order.id, order.status]),
      [
        ["9007199254740993", "pending"],
        ["9223372036854775807", "shipped"],
      ],
    );
    assert.equal((await client.setStatus("9007199254740993", "shipped")).status, "shipped");
    assert.equal(await cancel("9007199254740993", "client-orders"), 409);
    const created = await client.putOrder({
      id: 9223372036854775806n,
      petId: "9007199254740995",
      status: "pending",
    });
    assert.deepEqual(created, { id: "9223372036854775806", petId: "9007199254740995", status: "pending" });
    assert.equal(await cancel("9223372036854775806", "client-orders"), 204);
    await client.removeOrder(1);
    assert.equal((await client.orders()).length, 12, "one removed, one added");
    const sessions = await client.sessions();
    assert.deepEqual(
      sessions
        .filter((session) => session.name === "client-orders")
        .map(({ orders, changes }) => ({ orders, changes })),
      [{ orders: 12, changes: 3 }],
    );
    await client.reset();
    assert.equal((await client.orders()).find((order) => order.id === "9007199254740993")?.status, "pending");
  });

  it("creates and removes orders by the hundred in a few requests, ids exact", async () => {
    const client = createControlClient(mock.url, { session: "client-batch" });
    const ids = Array.from({ length: 250 }, (_, at) => (9223372036854775000n - BigInt(at)).toString());
    const order = (id: string) => ({ id, petId: 1, status: "pending" as const });
    const made = await client.batch({ create: [...ids.map(order), order("1")] });
    assert.deepEqual(made, { created: ids, removed: [] }, "order 1 was there already");
    assert.equal((await client.orders()).length, 262);
    assert.equal(await cancel(ids[249] as string, "client-batch"), 204);
    const gone = await client.batch({ create: [order("5")], remove: [...ids.slice(0, 150), "424242"] });
    assert.deepEqual(gone, { created: [], removed: ids.slice(0, 150) });
    assert.equal((await client.orders()).length, 112);
  });

  it("sets behaviour, reads and clears the journal, and throws the Error record of a refusal", async () => {
    const client = createControlClient(`${new URL(mock.url).origin}/__control`, { session: "client-rules" });
    const rules = await client.behaviour({ rules: [{ operation: "cancelOrder", status: 503, times: 1 }] });
    assert.deepEqual(rules, { delayMs: 0, rules: [{ operation: "cancelOrder", status: 503, times: 1 }] });
    assert.equal(await cancel("2", "client-rules"), 503);
    assert.deepEqual(await client.behaviour(), { delayMs: 0, rules: [] });
    const journal = await client.requests();
    assert.deepEqual(
      journal.map(({ method, status, session }) => [method, status, session]),
      [["DELETE", 503, "client-rules"]],
    );
    await client.clearRequests();
    assert.deepEqual(await client.requests(), []);
    await assert.rejects(client.setStatus(424242, "shipped"), (error: unknown) => {
      assert.ok(error instanceof ControlError);
      assert.equal(error.status, 404);
      assert.equal(error.record?.code, "order_not_found");
      return true;
    });
    await assert.rejects(client.setStatus("1; DROP", "shipped"), TypeError);
  });

  it("an address nothing listens on: one line naming the URL tried and the cause's code", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const client = createControlClient(`http://127.0.0.1:${port}/v1`);
    await assert.rejects(client.reset(), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.equal(
        error.message,
        `cannot reach the mock's control API: POST http://127.0.0.1:${port}/__control/reset failed (ECONNREFUSED); is the mock running at that address?`,
      );
      // The socket's error stays the cause, for callers that read its code.
      assert.equal((error.cause as NodeJS.ErrnoException).code, "ECONNREFUSED");
      return true;
    });
  });
});
