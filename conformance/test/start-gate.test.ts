import assert from "node:assert/strict";
import http, { createServer, type RequestOptions } from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Exchange } from "../judging/exchange.ts";
import { createHttpClient } from "../target/http-client.ts";
import { StartGate } from "../target/start-gate.ts";

type LookupCallback = Parameters<LookupFunction>[2];

/** Answers the loopback address when `release` is called; until then the connection is still opening. */
function heldLookup(): { lookup: LookupFunction; release: (error?: Error) => void; asked: Promise<void> } {
  let answer: ((error?: Error) => void) | undefined;
  let asked: () => void = () => {};
  const askedPromise = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const lookup: LookupFunction = (_hostname, options, callback: LookupCallback) => {
    answer = (error) => {
      if (error) callback(error, "", 4);
      else if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
      else callback(null, "127.0.0.1", 4);
    };
    asked();
  };
  return { lookup, release: (error) => answer?.(error), asked: askedPromise };
}

describe("a burst sent through a StartGate", () => {
  let server: http.Server;
  let port: number;
  const arrived: string[] = [];
  let firstArrival: Promise<void>;
  let onArrival: () => void = () => {};
  before(async () => {
    server = createServer((request, response) => {
      arrived.push(request.url ?? "");
      onArrival();
      response.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  /** http.request with the nth request's name lookup held, as interceptors replace it. */
  async function burstWithOneHeld(
    parties: number,
    run: (held: ReturnType<typeof heldLookup>) => Promise<void>,
  ): Promise<Exchange[]> {
    arrived.length = 0;
    firstArrival = new Promise((resolve) => {
      onArrival = resolve;
    });
    const held = heldLookup();
    const original = http.request;
    let calls = 0;
    http.request = ((options: RequestOptions, onAnswer: (incoming: http.IncomingMessage) => void) => {
      calls++;
      return original(calls === parties ? { ...options, lookup: held.lookup } : options, onAnswer);
    }) as typeof http.request;
    const client = await createHttpClient(new URL(`http://localhost:${port}/v1`), { timeoutMs: 10_000 });
    try {
      const together = new StartGate(parties, 60_000);
      const sent = Array.from({ length: parties }, (_, index) =>
        client.send("DELETE", `/orders/${index}`, {}, { together }),
      );
      await run(held);
      return await Promise.all(sent);
    } finally {
      http.request = original;
      client.close();
    }
  }

  it("no request leaves before every connection of the burst is open; then all of them go", async () => {
    let arrivedBeforeRelease = -1;
    const exchanges = await burstWithOneHeld(3, async (held) => {
      await held.asked;
      // Room for the other two to be sent, had they not waited for the third connection.
      await Promise.race([firstArrival, sleep(300)]);
      arrivedBeforeRelease = arrived.length;
      held.release();
    });
    assert.equal(arrivedBeforeRelease, 0, "a request left before the burst's last connection opened");
    assert.deepEqual(
      exchanges.map((exchange) => exchange.response?.status),
      [200, 200, 200],
    );
    assert.deepEqual([...arrived].sort(), ["/v1/orders/0", "/v1/orders/1", "/v1/orders/2"]);
  });

  it("a connection that fails does not hold the others back", async () => {
    const exchanges = await burstWithOneHeld(3, async (held) => {
      await held.asked;
      held.release(Object.assign(new Error("getaddrinfo ENOTFOUND localhost"), { code: "ENOTFOUND" }));
    });
    assert.deepEqual(
      exchanges.slice(0, 2).map((exchange) => exchange.response?.status),
      [200, 200],
    );
    assert.match(exchanges[2]?.error ?? "", /ENOTFOUND/);
  });

  it("opens when its wait is over, whoever has not arrived", async () => {
    const gate = new StartGate(2, 10);
    gate.arrive();
    await gate.opened;
    await new StartGate(0).opened;
  });
});
