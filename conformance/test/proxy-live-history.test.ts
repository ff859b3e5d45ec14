import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { startSourceProxy } from "../../test-support/proxy-process.ts";
import { startMockProcess } from "../../test-support/spawn-mock.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-proxy-live-history-");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The failed checks of a proxy's JSON report, as `id: message`. */
function failures(report: Report): string[] {
  return report.scenarios
    .flatMap((scenario) => scenario.checks)
    .filter((check) => check.status === "failed")
    .map((check) => `${check.id}: ${check.message}`);
}

/** What a test backend does with a DELETE of `/store/orders/{id}` (`slash`: "/" when the path ended in one). */
type OnCancel = (id: string, slash: string, response: ServerResponse, cancelled: Set<string>) => void;

/**
 * A test backend over `ids`: its list shows those `listed` says (by default, those not cancelled), and
 * `onCancel` answers each cancel, adding what it carried out to `cancelled`.
 */
async function startOrdersUpstream(
  ids: readonly string[],
  onCancel: OnCancel,
  listed: (id: string, cancelled: Set<string>) => boolean = (id, cancelled) => !cancelled.has(id),
): Promise<{ url: string; close(): Promise<void> }> {
  const cancelled = new Set<string>();
  const record = (id: string) =>
    `{"id":${id},"petId":7,"quantity":1,"shipDate":"2026-01-01T00:00:00.000Z","complete":false}`;
  const server: Server = createServer((request, response) => {
    const [, id, slash] = /^\/v1\/store\/orders\/(\d+)(\/?)$/.exec(request.url ?? "") ?? [];
    if (request.method === "DELETE" && id !== undefined)
      return onCancel(id, slash ?? "", response, cancelled);
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      `[${ids
        .filter((each) => listed(each, cancelled))
        .map(record)
        .join(",")}]`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answerError(response: ServerResponse, status: number, code: string): void {
  response
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ code, message: "Not this time.", status }));
}

/**
 * A backend that decides the spec's open choice per order, which the spec allows only once per deployment:
 * the first order stays listed once cancelled, the second leaves the list.
 */
function startInconsistentUpstream(ids: readonly [string, string]) {
  return startOrdersUpstream(
    ids,
    (id, slash, response, cancelled) => {
      if (slash !== "" || !ids.includes(id)) return answerError(response, 404, "not_found");
      if (cancelled.has(id)) return answerError(response, 409, "conflict");
      cancelled.add(id);
      response.writeHead(204).end();
    },
    (id, cancelled) => id === ids[0] || !cancelled.has(id),
  );
}

/**
 * A backend that keeps the spec (cancelled orders leave the list, a second cancel answers 404), except
 * that the first cancel of `gateway` takes effect and is answered 502, and the first of `reset` takes
 * effect and its connection is reset before any answer.
 */
function startLossyUpstream(ids: readonly string[], gateway: string, reset: string) {
  return startOrdersUpstream(ids, (id, slash, response, cancelled) => {
    if (slash !== "") return answerError(response, 404, "not_found");
    const first = !cancelled.has(id);
    cancelled.add(id);
    if (first && id === reset) response.socket?.destroy();
    else if (first && id === gateway) answerError(response, 502, "bad_gateway");
    else if (first) response.writeHead(204).end();
    else answerError(response, 404, "not_found");
  });
}

/**
 * A backend that keeps the spec (cancelled orders leave the list, a second cancel answers 404) and carries
 * out a cancel as soon as it comes, but answers one of `/store/orders/{id}` only when told to, so that its
 * client can leave first; one sent with a trailing slash it routes as the cancel and answers at once, or
 * (`holdSlashed`) never.
 */
async function startSlowCancelUpstream(ids: readonly string[], { holdSlashed = false } = {}) {
  let received = 0;
  let closedUnanswered = 0;
  const upstream = await startOrdersUpstream(ids, (id, slash, response, cancelled) => {
    const first = !cancelled.has(id);
    cancelled.add(id);
    received++;
    if ((slash === "" || holdSlashed) && first) {
      response.on("close", () => {
        if (!response.writableFinished) closedUnanswered++;
      });
      return;
    }
    if (first) response.writeHead(204).end();
    else answerError(response, 404, "not_found");
  });
  return { ...upstream, received: () => received, closedUnanswered: () => closedUnanswered };
}

/**
 * A check-then-act backend whose race never depends on timing: the first cancel of an order reads it
 * pending and waits for the second cancel of that order, which reads it pending too; both answer 204.
 */
function startPairedCancelUpstream(ids: readonly string[]) {
  const waiting = new Map<string, () => void>();
  return startOrdersUpstream(ids, (id, _slash, response, cancelled) => {
    const answer = () => {
      cancelled.add(id);
      response.writeHead(204).end();
    };
    const first = waiting.get(id);
    if (first === undefined) {
      waiting.set(id, answer);
      return;
    }
    first();
    answer();
  });
}

/** Runs `clients` concurrent loops of requests through the proxy, each from its own list of steps. */
async function concurrently(clients: ReadonlyArray<ReadonlyArray<() => Promise<unknown>>>): Promise<void> {
  await Promise.all(
    clients.map(async (steps) => {
      for (const step of steps) await step();
    }),
  );
}

describe("the proxy checks live traffic with the spec's model", () => {
  it("flags a backend that answers 204 twice for one order under concurrency, in explore's words", async () => {
    const ids = ["41", "42", "43"];
    const upstream = await startPairedCancelUpstream(ids);
    const json = join(folder, "double-204.json");
    const proxy = await startSourceProxy([
      "--upstream",
      upstream.url,
      "--fail-on-violation",
      "--reporter",
      `json:${json}`,
    ]);
    let code: number | null;
    try {
      const headers = { authorization: "Bearer some-key" };
      const cancel = (id: string) => () =>
        fetch(`${proxy.url}/store/orders/${id}`, { method: "DELETE", headers }).then((answer) =>
          answer.text(),
        );
      // Two cancels of each order at once: the backend reads pending for both before either writes.
      await concurrently([ids.map(cancel), ids.map(cancel)]);
    } finally {
      ({ code } = await proxy.stop("SIGTERM"));
      await upstream.close();
    }
    assert.equal(code, 1, "a finding fails the proxy's gate");
    const found = failures(JSON.parse(readFileSync(json, "utf8")) as Report);
    assert.ok(found.length > 0, "the double 204 is flagged");
    for (const failure of found)
      assert.match(
        failure,
        /^state\.cancel-once: order \d+ was cancelled twice: #\d+ DELETE \/v1\/store\/orders\/\d+ → 204 \([\d.]+–[\d.]+ ms\), #\d+ DELETE \/v1\/store\/orders\/\d+ → 204 \([\d.]+–[\d.]+ ms\)$/,
      );
  });

  it("flags a backend whose cancelled orders stay listed for one order and leave the list for another", async () => {
    const stays = "9007199254740993";
    const leaves = "9007199254740995";
    const upstream = await startInconsistentUpstream([stays, leaves]);
    const json = join(folder, "inconsistent-choices.json");
    const proxy = await startSourceProxy([
      "--upstream",
      upstream.url,
      "--fail-on-violation",
      "--reporter",
      `json:${json}`,
    ]);
    let code: number | null;
    try {
      const headers = { authorization: "Bearer some-key" };
      const list = () => fetch(`${proxy.url}/store/orders`, { headers }).then((answer) => answer.text());
      const cancel = (id: string) =>
        fetch(`${proxy.url}/store/orders/${id}`, { method: "DELETE", headers }).then((answer) =>
          answer.text(),
        );
      // One step at a time: #1 list, #2 cancel, #3 list, #4 cancel, #5 list.
      await list();
      await cancel(stays);
      await list();
      await cancel(leaves);
      await list();
    } finally {
      ({ code } = await proxy.stop("SIGTERM"));
      await upstream.close();
    }
    const found = failures(JSON.parse(readFileSync(json, "utf8")) as Report);
    assert.deepEqual(
      found.map((failure) => failure.replace(/: .*; (this deployment showed)/, ": …; $1")),
      [
        `state.stale-read: …; this deployment showed cancelled orders leave the list for order ${leaves} at exchange #5 GET /v1/store/orders → 200`,
      ],
    );
    assert.match(
      found[0] ?? "",
      new RegExp(
        `^state\\.stale-read: order ${stays} was listed as it was before a cancel of it was answered \\(at least [\\d.]+ ms stale\\): `,
      ),
    );
    assert.equal(code, 1, "a finding fails the proxy's gate");
  });

  it("reads a cancel answered 502, or not answered, as one that may have taken effect", async () => {
    const [gateway, reset, other] = ["11", "12", "13"] as const;
    const upstream = await startLossyUpstream([gateway, reset, other], gateway, reset);
    const json = join(folder, "lossy.json");
    const proxy = await startSourceProxy(["--upstream", upstream.url, "--reporter", `json:${json}`]);
    try {
      const headers = { authorization: "Bearer some-key" };
      const list = () => fetch(`${proxy.url}/store/orders`, { headers }).then((answer) => answer.text());
      const cancel = (id: string) =>
        fetch(`${proxy.url}/store/orders/${id}`, { method: "DELETE", headers }).then((answer) =>
          answer.text(),
        );
      // One step at a time: the orders listed, each cancelled (two of them lost), then listed no more.
      await list();
      for (const id of [gateway, gateway, reset, reset, other]) await cancel(id);
      await list();
    } finally {
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
    const found = failures(JSON.parse(readFileSync(json, "utf8")) as Report);
    assert.deepEqual(
      found.filter((failure) => failure.startsWith("state.")),
      [],
    );
  });

  it("reads a cancel its client left, or sent with a trailing slash, as one that may have taken effect", async () => {
    const [left, slashed, other] = ["21", "22", "23"] as const;
    const upstream = await startSlowCancelUpstream([left, slashed, other]);
    const json = join(folder, "unjudged-cancels.json");
    const proxy = await startSourceProxy(["--upstream", upstream.url, "--reporter", `json:${json}`]);
    try {
      const headers = { authorization: "Bearer some-key" };
      const list = () => fetch(`${proxy.url}/store/orders`, { headers }).then((answer) => answer.text());
      const cancel = (path: string, signal?: AbortSignal) =>
        fetch(`${proxy.url}/store/orders/${path}`, {
          method: "DELETE",
          headers,
          ...(signal ? { signal } : {}),
        })
          .then((answer) => answer.text())
          .catch(() => "the client left");
      await list();
      // The upstream carries the cancel out; its client leaves before the answer, as a page left would.
      const leaving = new AbortController();
      const gone = cancel(left, leaving.signal);
      while (upstream.received() === 0) await sleep(10);
      leaving.abort();
      await gone;
      while (upstream.closedUnanswered() === 0) await sleep(10);
      await list();
      await cancel(left);
      await cancel(`${slashed}/`);
      await list();
    } finally {
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
    const found = failures(JSON.parse(readFileSync(json, "utf8")) as Report);
    assert.deepEqual(
      found.filter((failure) => failure.startsWith("state.")),
      [],
    );
  });

  it("counts a cancel sent with a trailing slash as in flight until it is answered", async () => {
    const [slashed, other] = ["31", "32"] as const;
    const upstream = await startSlowCancelUpstream([slashed, other], { holdSlashed: true });
    const json = join(folder, "slashed-in-flight.json");
    const proxy = await startSourceProxy(["--upstream", upstream.url, "--reporter", `json:${json}`]);
    let held: Promise<unknown> = Promise.resolve();
    try {
      const headers = { authorization: "Bearer some-key" };
      const list = () => fetch(`${proxy.url}/store/orders`, { headers }).then((answer) => answer.text());
      await list();
      // Carried out upstream at once, answered never: the list after it no longer shows the order.
      held = fetch(`${proxy.url}/store/orders/${slashed}/`, { method: "DELETE", headers }).catch(
        () => "cut at the stop",
      );
      while (upstream.received() === 0) await sleep(10);
      assert.doesNotMatch(await list(), new RegExp(`"id":${slashed}\\b`));
    } finally {
      await proxy.stop("SIGTERM");
      await held;
      await upstream.close();
    }
    const found = failures(JSON.parse(readFileSync(json, "utf8")) as Report);
    assert.deepEqual(
      found.filter((failure) => failure.startsWith("state.")),
      [],
    );
  });

  it("finds nothing in the mock under concurrent lists and cancels", async () => {
    const mock = await startMockProcess(["--quiet"]);
    const json = join(folder, "mock.json");
    const proxy = await startSourceProxy([
      "--upstream",
      mock.url,
      "--fail-on-violation",
      "--reporter",
      `json:${json}`,
    ]);
    let code: number | null;
    try {
      const headers = { authorization: "Bearer dev-key-123" };
      const list = () => fetch(`${proxy.url}/store/orders`, { headers }).then((answer) => answer.json());
      const orders = (await list()) as Array<{ id: number | string }>;
      const ids = orders.slice(0, 12).map((order) => String(order.id));
      assert.ok(ids.length >= 4, "the mock has orders to cancel");
      const cancel = (id: string) => () =>
        fetch(`${proxy.url}/store/orders/${id}`, { method: "DELETE", headers }).then((answer) =>
          answer.text(),
        );
      // Each client cancels every order, in its own order, with lists in between: cancels and lists overlap.
      const client = (shift: number) =>
        ids.flatMap((_, index) => [cancel(ids[(index + shift) % ids.length] as string), list]);
      await concurrently([client(0), client(3), client(6), client(9)]);
    } finally {
      ({ code } = await proxy.stop("SIGTERM"));
      await mock.stop();
    }
    assert.equal(code, 0, "nothing fails the proxy's gate");
    const report = JSON.parse(readFileSync(json, "utf8")) as Report;
    assert.deepEqual(failures(report), []);
    const state = report.scenarios.find((scenario) => scenario.id === "state");
    const judged = state?.checks.find((check) => check.id === "state.cancel-answer-matches-state");
    assert.equal(judged?.status, "passed", "the model judged the traffic");
  });
});
