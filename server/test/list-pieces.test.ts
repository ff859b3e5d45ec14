import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import {
  MILLION_ORDERS_START_MS,
  type MockProcess,
  startMockProcess,
} from "../../test-support/spawn-mock.ts";
import { wholeBytes } from "../core/exchange.ts";
import type { SeedOrder } from "../core/order-record.ts";
import { createSeed } from "../core/seed.ts";
import { createStore } from "../core/store.ts";
import { DEV_KEY } from "./support.ts";

const decoder = new TextDecoder();
// Long enough that runs of unchanged orders are served as views of the seed's body as well as copied.
const SEED_SIZE = 3_000;
const seedOrder = (id: bigint, quantity: bigint): SeedOrder => ({
  record: { id, petId: 7n, quantity, shipDate: "2026-11-02T10:00:00Z", complete: false },
  status: "pending",
});
const seedOrders = Array.from({ length: SEED_SIZE }, (_, index) => seedOrder(BigInt(index) * 3n + 1n, 1n));
const seed = createSeed(seedOrders);
const recordJson = (order: SeedOrder) =>
  JSON.stringify(order.record, (_, value) => (typeof value === "bigint" ? `#${value}#` : value)).replace(
    /"#(-?\d+)#"/g,
    "$1",
  );

type Step =
  | { kind: "replace"; place: number; quantity: bigint }
  | { kind: "remove"; place: number }
  | { kind: "add"; id: bigint }
  | { kind: "cancel"; place: number };

const place = fc.nat({ max: SEED_SIZE - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("replace" as const),
    place,
    quantity: fc.bigInt({ min: 2n, max: 2n ** 63n - 1n }),
  }),
  fc.record({ kind: fc.constant("remove" as const), place }),
  fc.record({ kind: fc.constant("add" as const), id: fc.bigInt({ min: 2n ** 53n, max: 2n ** 63n - 1n }) }),
  fc.record({ kind: fc.constant("cancel" as const), place }),
);

describe("list-pieces", () => {
  it("a session's list is the seed's orders as it changed them, then its added ones, byte for byte", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const store = createStore(seed);
        // The model: the list as an array of orders, changed in place, removed, appended.
        const model: Array<SeedOrder | null> = [...seedOrders];
        for (const each of steps) {
          if (each.kind === "add") {
            const order = seedOrder(each.id, 1n);
            const at = model.findIndex((listed) => listed?.record.id === each.id);
            store.putOrder(order);
            if (at === -1) model.push(order);
            else model[at] = order;
            continue;
          }
          const original = seedOrders[each.place] as SeedOrder;
          if (model[each.place] === null) continue;
          if (each.kind === "replace") {
            const order = seedOrder(original.record.id, each.quantity);
            store.putOrder(order);
            model[each.place] = order;
          } else if (each.kind === "remove") {
            store.removeOrder(original.record.id);
            model[each.place] = null;
          } else store.cancel(original.record.id);
        }
        const expected = `[${model
          .filter((order) => order !== null)
          .map(recordJson)
          .join(",")}]`;
        assert.equal(decoder.decode(wholeBytes(store.listBody())), expected);
      }),
      { numRuns: 60 },
    );
  });

  it("shares the seed's bytes: a session that added one order holds that order, not a copy of the list", () => {
    const store = createStore(seed);
    store.putOrder(seedOrder(2n ** 62n, 1n));
    const body = store.listBody();
    assert.ok(!(body instanceof Uint8Array));
    assert.ok(body.pieces.some((piece) => piece.buffer === seed.listBody.buffer));
    assert.ok(
      store.heldBytes < 4096,
      `holds ${store.heldBytes} bytes beside a list of ${seed.listBody.length}`,
    );
  });

  describe("a real mock over a million orders", () => {
    let mock: MockProcess;
    before(async () => {
      mock = await startMockProcess(["--quiet", "--generate", "1000000"], {}, MILLION_ORDERS_START_MS);
    });
    after(() => mock.stop());

    it("a session's first list after it added orders is the world's list then its orders, ids exact, while /__health answers", async () => {
      const origin = new URL(mock.url).origin;
      const session = { "x-mock-session": "adds" };
      const addedIds = Array.from({ length: 1_000 }, (_, index) =>
        (2n ** 53n + 1n + BigInt(index)).toString(),
      );
      for (const id of addedIds) {
        const put = await fetch(`${origin}/__control/orders/${id}`, {
          method: "PUT",
          headers: { ...session, "content-type": "application/json" },
          body: '{"petId":7,"quantity":1,"status":"pending"}',
        });
        assert.equal(put.status, 201, await put.text());
      }
      const healthStatuses: number[] = [];
      let listing = true;
      const polling = (async () => {
        while (listing) {
          const health = await fetch(`${origin}/__health`);
          await health.arrayBuffer();
          healthStatuses.push(health.status);
          await new Promise((done) => setTimeout(done, 5));
        }
      })();
      const list = await fetch(`${mock.url}/store/orders`, {
        headers: { ...session, authorization: `Bearer ${DEV_KEY}` },
      });
      const sessionBody = Buffer.from(await list.arrayBuffer());
      listing = false;
      await polling;
      assert.equal(list.status, 200);
      assert.equal(Number(list.headers.get("content-length")), sessionBody.length);

      const world = await fetch(`${mock.url}/store/orders`, {
        headers: { authorization: `Bearer ${DEV_KEY}` },
      });
      const worldBody = Buffer.from(await world.arrayBuffer());
      const shared = worldBody.length - 1;
      assert.equal(
        Buffer.compare(sessionBody.subarray(0, shared), worldBody.subarray(0, shared)),
        0,
        "the million orders as the world lists them",
      );
      const tail = sessionBody.subarray(shared).toString();
      assert.ok(tail.startsWith(",{") && tail.endsWith("}]"), tail.slice(0, 80));
      assert.deepEqual(
        [...tail.matchAll(/"id":(-?\d+)/g)].map((match) => match[1]),
        addedIds,
        "the added orders in order, ids digit for digit",
      );
      assert.ok(healthStatuses.length > 0 && healthStatuses.every((status) => status === 200));
    });
  });

  describe("a real mock over the bundled fixtures", () => {
    let mock: MockProcess;
    before(async () => {
      mock = await startMockProcess(["--quiet"]);
    });
    after(() => mock.stop());

    /** The raw answer to a request, read until the mock closes the connection. */
    const rawAnswer = async (method: string, headers: Record<string, string>) => {
      const url = new URL(mock.url);
      const socket = connect(Number(url.port), url.hostname);
      const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
      socket.end(
        `${method} /v1/store/orders HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n${lines.join("")}\r\n`,
      );
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      const headEnd = raw.indexOf("\r\n\r\n");
      const head = raw.subarray(0, headEnd).toString();
      return { length: Number(/content-length: (\d+)/i.exec(head)?.[1]), body: raw.subarray(headEnd + 4) };
    };

    it("a session's list in pieces answers HEAD with its length, and a truncate fault with half of it", async () => {
      const session = { "x-mock-session": "pieces" };
      const put = await fetch(`${new URL(mock.url).origin}/__control/orders/9223372036854775806`, {
        method: "PUT",
        headers: { ...session, "content-type": "application/json" },
        body: '{"petId":7,"quantity":1,"status":"pending"}',
      });
      assert.equal(put.status, 201);
      const auth = { ...session, authorization: `Bearer ${DEV_KEY}` };
      const whole = await rawAnswer("GET", auth);
      assert.equal(whole.body.length, whole.length);
      assert.match(whole.body.toString(), /"id":9223372036854775806[,}]/);
      const head = await rawAnswer("HEAD", auth);
      assert.equal(head.length, whole.length);
      assert.equal(head.body.length, 0);
      const rules = await fetch(`${new URL(mock.url).origin}/__control/behaviour`, {
        method: "PUT",
        headers: { ...session, "content-type": "application/json" },
        body: '{"rules":[{"operation":"listOrders","fault":"truncate"}]}',
      });
      assert.equal(rules.status, 200, await rules.text());
      const cut = await rawAnswer("GET", auth);
      assert.equal(cut.length, whole.length, "the head promises the whole body");
      assert.deepEqual(cut.body, whole.body.subarray(0, Math.floor(whole.length / 2)));
    });
  });
});
