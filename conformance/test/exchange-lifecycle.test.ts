import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { builtInContract } from "../../contract/built-in.ts";
import { createVersionedRouter, readOperations } from "../../contract/operations.ts";
import type { ListJudges } from "../judging/list-feed.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";
import type { ExchangeOutcome, ExchangeTap, ForwarderSettings } from "../proxy/exchange-lifecycle.ts";
import { Forwarder } from "../proxy/forward-exchange.ts";
import { KEPT_BYTES } from "../proxy/forwarded-body.ts";

// An exchange's lifecycle with taps composed onto it: each hook of each tap in order, and a tap that
// throws failing its own exchange only, with a 502 before anything was answered, a cut after.

const ORDER = '{"id":9007199254740993,"status":"placed"}';

/** A tap that writes down each hook it is called at, under its name, and throws where it is told to. */
function recordingTap(
  name: string,
  calls: string[],
  throwsAt?: (hook: string, path: string) => boolean,
): ExchangeTap {
  let path = "";
  const hook = (at: string) => {
    calls.push(`${name}:${at}`);
    if (throwsAt?.(at, path)) throw new Error(`${name} broke at ${at}`);
  };
  return {
    onRequest: (exchange) => {
      path = exchange.url;
      hook("onRequest");
    },
    onUpstreamHead: () => hook("onUpstreamHead"),
    onData: () => hook("onData"),
    onEnd: () => hook("onEnd"),
    onError: () => hook("onError"),
    onFinish: () => hook("onFinish"),
    onRelease: () => hook("onRelease"),
  };
}

async function listening(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function get(
  base: string,
  path: string,
): Promise<{ status: number; body: string } | { broken: string }> {
  try {
    const answer = await fetch(`${base}${path}`);
    return { status: answer.status, body: await answer.text() };
  } catch (error) {
    return { broken: String((error as Error & { cause?: unknown }).cause ?? error) };
  }
}

/** A forwarder to `upstream` with the settings these tests share, and `own` over them. */
function testForwarder(
  upstream: string,
  agent: http.Agent,
  own: Partial<ForwarderSettings>,
  done: (outcome: ExchangeOutcome) => void,
): Forwarder {
  return new Forwarder(
    {
      upstream: new URL(`${upstream}/v1`),
      route: createVersionedRouter(readOperations(builtInContract())),
      agent,
      tls: {},
      send: http.request,
      timeoutMs: 5000,
      deadlineMs: 30_000,
      added: [],
      holdAnswers: false,
      keepForHar: false,
      hide: (text) => text,
      secretNames: new Set(),
      maxBodyBytes: 1024 * 1024,
      judges: { feed: () => assert.fail("no list is asked for here"), close: async () => {} } as ListJudges,
      ...own,
    },
    done,
  );
}

/** The proxy's front: each request handed to `forwarder` as its edge does, `onResponse` given each answer first. */
function frontOf(
  forwarder: Forwarder,
  onResponse: (response: http.ServerResponse) => void = () => {},
): http.Server {
  return http.createServer((request, response) => {
    onResponse(response);
    const target = request.url ?? "/";
    forwarder.forward(request, response, {
      method: request.method ?? "GET",
      target,
      url: new URL(target, "http://127.0.0.1"),
    });
  });
}

describe("an exchange's lifecycle", () => {
  const calls: string[] = [];
  const outcomes: ExchangeOutcome[] = [];
  const agent = new http.Agent({ keepAlive: true });
  // Answers in two writes, so that a tap sees the body as data after the head went to the client.
  const upstream = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.write(ORDER.slice(0, 10));
    setTimeout(() => response.end(ORDER.slice(10)), 20);
  });
  const throwsAt = (hook: string, path: string) =>
    (hook === "onUpstreamHead" && path.endsWith("/1")) || (hook === "onData" && path.endsWith("/2"));
  let forwarder: Forwarder;
  let front: http.Server;
  let base = "";

  before(async () => {
    forwarder = testForwarder(
      await listening(upstream),
      agent,
      {
        deadlineMs: 10_000,
        taps: () => [recordingTap("first", calls, throwsAt), recordingTap("second", calls)],
      },
      (outcome) => outcomes.push(outcome),
    );
    front = frontOf(forwarder);
    base = await listening(front);
  });

  after(async () => {
    forwarder.stop();
    agent.destroy();
    front.closeAllConnections();
    upstream.closeAllConnections();
    await new Promise((resolve) => front.close(resolve));
    await new Promise((resolve) => upstream.close(resolve));
  });

  it("calls each hook of its taps in the order they were composed, and passes the answer on as it came", async () => {
    calls.length = 0;
    outcomes.length = 0;
    assert.deepEqual(await get(base, "/v1/store/orders/9007199254740993"), { status: 200, body: ORDER });
    const data = calls.filter((call) => call.endsWith(":onData"));
    assert.equal(data.length % 2, 0);
    assert.deepEqual(
      calls.filter((call) => !call.endsWith(":onData")),
      [
        "first:onRequest",
        "second:onRequest",
        "first:onUpstreamHead",
        "second:onUpstreamHead",
        "first:onEnd",
        "second:onEnd",
        "first:onFinish",
        "second:onFinish",
        "first:onRelease",
        "second:onRelease",
      ],
    );
    for (let at = 0; at < data.length; at += 2)
      assert.deepEqual(data.slice(at, at + 2), ["first:onData", "second:onData"]);
    assert.equal(outcomes.length, 1);
    assert.equal(outcomes[0]?.forwarded.response?.body, ORDER);
    assert.equal(outcomes[0]?.forwarded.fault, undefined);
  });

  it("fails only the exchange whose tap threw: a 502 before anything was answered, a cut after", async () => {
    outcomes.length = 0;
    const [beforeAnswer, afterAnswer, other] = await Promise.all([
      get(base, "/v1/store/orders/1"),
      get(base, "/v1/store/orders/2"),
      get(base, "/v1/store/orders/3"),
    ]);
    assert.equal("status" in beforeAnswer && beforeAnswer.status, 502);
    assert.match(
      "body" in beforeAnswer ? beforeAnswer.body : "",
      /"code":"proxy_fault".*first broke at onUpstreamHead/,
    );
    assert.ok("broken" in afterAnswer, "the answer had begun: the client sees it cut, not a second status");
    assert.deepEqual(other, { status: 200, body: ORDER });
    const faults = outcomes.map((outcome) => [outcome.forwarded.url, outcome.forwarded.fault]).sort();
    assert.deepEqual(faults, [
      ["/v1/store/orders/1", "the proxy failed on this exchange: first broke at onUpstreamHead"],
      ["/v1/store/orders/2", "the proxy failed on this exchange: first broke at onData"],
      ["/v1/store/orders/3", undefined],
    ]);
    // The proxy goes on: the next exchange on the same forwarder is whole.
    assert.deepEqual(await get(base, "/v1/store/orders/4"), { status: 200, body: ORDER });
  });
});

describe("an exchange's bytes on their way to the client", () => {
  // Written and not yet taken by the client's connection, they were the process's memory outside the
  // account: a client that reads slowly made the proxy grow past --max-memory.
  it("are held in the account until the client's connection took them, or closed", async () => {
    const MiB = 1024 * 1024;
    const upstream = http.createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      response.end(Buffer.alloc(64 * MiB, 0x61));
    });
    const agent = new http.Agent({ keepAlive: false });
    const held = new MemoryBudget(1024 * MiB);
    const outcomes: ExchangeOutcome[] = [];
    const forwarder = testForwarder(
      await listening(upstream),
      agent,
      { maxBodyBytes: 1024 * MiB, held },
      (outcome) => outcomes.push(outcome),
    );
    const front = frontOf(forwarder);
    const base = await listening(front);
    try {
      const answer = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(`${base}/v1/not-an-operation`, resolve).on("error", reject),
      );
      answer.pause();
      // The client reads nothing: what the kernel does not take waits in the proxy, beyond the kept start.
      for (let tries = 0; held.held <= KEPT_BYTES && tries < 500; tries++) await sleep(10);
      assert.ok(held.held > KEPT_BYTES, `held ${held.held} bytes while the client read nothing`);
      answer.destroy();
      for (let tries = 0; outcomes.length === 0 && tries < 500; tries++) await sleep(10);
      assert.equal(outcomes.length, 1);
      assert.equal(held.held, 0, "the client gone: nothing is held for it");
    } finally {
      forwarder.stop();
      front.closeAllConnections();
      upstream.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});

describe("an exchange ended once the upstream's answer came whole, while its verdict was coming", () => {
  // A judge's thread or a held answer still had the verdict to give: the client's leaving, or the stop's
  // cut, then ended it without the answer, and a violation in it went unjudged.
  async function endedWhileJudging(
    end: (request: http.ClientRequest, forwarder: Forwarder, left: Promise<void>) => Promise<void>,
  ): Promise<ExchangeOutcome | undefined> {
    const upstream = http.createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(ORDER);
    });
    let upstreamEnded: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      upstreamEnded = resolve;
    });
    let giveVerdict: () => void = () => {};
    const verdict = new Promise<void>((resolve) => {
      giveVerdict = resolve;
    });
    const holdingTap: ExchangeTap = {
      holding: true,
      onEnd: () => {
        upstreamEnded();
        return verdict;
      },
    };
    const agent = new http.Agent({ keepAlive: false });
    const outcomes: ExchangeOutcome[] = [];
    const forwarder = testForwarder(
      await listening(upstream),
      agent,
      { taps: () => [holdingTap] },
      (outcome) => outcomes.push(outcome),
    );
    let clientLeft: () => void = () => {};
    const left = new Promise<void>((resolve) => {
      clientLeft = resolve;
    });
    const front = frontOf(forwarder, (response) => response.on("close", () => setImmediate(clientLeft)));
    const base = await listening(front);
    try {
      const request = http.get(`${base}/v1/store/orders`);
      request.on("error", () => {});
      await ended;
      await end(request, forwarder, left);
      giveVerdict();
      while (outcomes.length === 0) await sleep(5);
      return outcomes[0];
    } finally {
      forwarder.stop();
      agent.destroy();
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      await new Promise((resolve) => upstream.close(resolve));
    }
  }

  it("is judged on the whole answer though its client left", async () => {
    const outcome = await endedWhileJudging(async (request, _forwarder, left) => {
      request.destroy();
      await left;
    });
    assert.equal(outcome?.forwarded.brokenOff, undefined);
    assert.equal(outcome?.forwarded.response?.body, ORDER);
  });

  it("is judged on the whole answer though the stop cut what was in flight", async () => {
    const outcome = await endedWhileJudging(async (_request, forwarder) => {
      forwarder.cutInFlight("cut off: still in flight when the proxy stopped");
    });
    assert.equal(outcome?.forwarded.brokenOff, undefined);
    assert.equal(outcome?.forwarded.response?.body, ORDER);
  });
});
