import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ProxyProcess, startSourceProxy } from "../../test-support/proxy-process.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import type { Report } from "../reports/report.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";

const folder = tempFolder("conformance-state-barrier-");
const KEY = "dev-key-123";

/** The failed checks of a proxy's JSON report, as `id: message`. */
function failures(report: Report): string[] {
  return report.scenarios
    .flatMap((scenario) => scenario.checks)
    .filter((check) => check.status === "failed")
    .map((check) => `${check.id}: ${check.message}`);
}

/** The mock with the proxy in front of it, gating on violations; `run` gets the proxy's /v1 address. */
async function throughTheProxy(
  name: string,
  run: (proxy: ProxyProcess, mock: MockProcess) => Promise<void>,
  args: readonly string[] = [],
): Promise<{ code: number | null; report: Report }> {
  const mock = await startMockProcess(["--quiet"]);
  const json = join(folder, `${name}.json`);
  let proxy: ProxyProcess | undefined;
  let code: number | null = null;
  try {
    proxy = await startSourceProxy([
      "--upstream",
      mock.url,
      "--fail-on-violation",
      "--reporter",
      `json:${json}`,
      ...args,
    ]);
    await run(proxy, mock);
  } finally {
    if (proxy) ({ code } = await proxy.stop("SIGTERM"));
    await mock.stop();
  }
  return { code, report: JSON.parse(readFileSync(json, "utf8")) as Report };
}

/**
 * A backend of orders 1, 2 and 3 with an admin write of its own, `POST /admin/remove/{id}`, which removes
 * the order at once and answers `status` only once `release()` is called.
 */
async function startAdminUpstream(status: number) {
  const orders = new Set(["1", "2", "3"]);
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const record = (id: string) =>
    `{"id":${id},"petId":7,"quantity":1,"shipDate":"2026-01-01T00:00:00.000Z","complete":false}`;
  const server: Server = createServer((request, response) => {
    const [, removed] = /^\/admin\/remove\/(\d+)$/.exec(request.url ?? "") ?? [];
    if (request.method === "POST" && removed !== undefined) {
      orders.delete(removed);
      void released.then(() => response.writeHead(status).end());
      return;
    }
    if (!request.headers.authorization) {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ code: "unauthorized", message: "No key.", status: 401 }));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(`[${[...orders].map(record).join(",")}]`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    release: () => release(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A backend of orders 1, 2 and 3 that answers every cancel 204, a second one of the same order too (a lost
 * update), beside another API of its own: `POST /v1/pets` answers 201 and touches no order.
 */
async function startPetsUpstream() {
  const record = (id: number) =>
    `{"id":${id},"petId":7,"quantity":1,"shipDate":"2026-01-01T00:00:00.000Z","complete":false}`;
  const server: Server = createServer((request, response) => {
    request.resume();
    if (request.method === "POST" && request.url === "/v1/pets") {
      response.writeHead(201, { "content-type": "application/json" }).end('{"id":1,"name":"Rex"}');
      return;
    }
    if (!request.headers.authorization) {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ code: "unauthorized", message: "No key.", status: 401 }));
      return;
    }
    if (request.method === "DELETE") {
      response.writeHead(204).end();
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(`[${[1, 2, 3].map(record).join(",")}]`);
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

/** Two 204s for order 2 through a proxy with `args`, another API's POST between them. */
async function doubleCancelAroundPets(name: string, args: readonly string[]) {
  const upstream = await startPetsUpstream();
  const json = join(folder, `${name}.json`);
  let proxy: ProxyProcess | undefined;
  let code: number | null = null;
  try {
    proxy = await startSourceProxy([
      "--upstream",
      upstream.url,
      "--fail-on-violation",
      "--reporter",
      `json:${json}`,
      ...args,
    ]);
    const headers = { authorization: "Bearer some-key" };
    const list = await fetch(`${proxy.url}/store/orders`, { headers });
    assert.equal(list.status, 200);
    await list.arrayBuffer();
    assert.equal((await fetch(`${proxy.url}/store/orders/2`, { method: "DELETE", headers })).status, 204);
    const pet = await fetch(`${proxy.url}/pets`, { method: "POST", body: '{"name":"Rex"}' });
    assert.equal(pet.status, 201);
    await pet.arrayBuffer();
    assert.equal((await fetch(`${proxy.url}/store/orders/2`, { method: "DELETE", headers })).status, 204);
  } finally {
    if (proxy) ({ code } = await proxy.stop("SIGTERM"));
    await upstream.close();
  }
  return { code, report: JSON.parse(readFileSync(json, "utf8")) as Report };
}

describe("writes outside the contract through the proxy are barriers to the state rules", () => {
  for (const status of [204, 403])
    it(`compares a list answered while a write outside the contract is in flight with nothing (then ${status})`, async () => {
      const upstream = await startAdminUpstream(status);
      const json = join(folder, `in-flight-${status}.json`);
      const proxy = await startSourceProxy(["--upstream", upstream.url, "--reporter", `json:${json}`]);
      try {
        const headers = { authorization: "Bearer some-key" };
        const list = () => fetch(`${proxy.url}/store/orders`, { headers }).then((answer) => answer.json());
        assert.equal(((await list()) as unknown[]).length, 3);
        const write = fetch(new URL("/admin/remove/2", proxy.url), { method: "POST" });
        // The write took effect upstream before its answer: the list may show the store after it.
        let shown = 3;
        while (shown === 3) shown = ((await list()) as unknown[]).length;
        upstream.release();
        assert.equal((await write).status, status);
      } finally {
        await proxy.stop("SIGTERM");
        await upstream.close();
      }
      const report = JSON.parse(readFileSync(json, "utf8")) as Report;
      assert.deepEqual(failures(report), []);
    });

  it("takes a second 204 after POST /__control/reset as a new round, not a second cancel", async () => {
    const { code, report } = await throughTheProxy("reset", async (proxy) => {
      const headers = { authorization: `Bearer ${KEY}` };
      const round = async () => {
        const list = await fetch(`${proxy.url}/store/orders`, { headers });
        assert.equal(list.status, 200);
        await list.arrayBuffer();
        const cancel = await fetch(`${proxy.url}/store/orders/3`, { method: "DELETE", headers });
        assert.equal(cancel.status, 204);
      };
      await round();
      // The reset before each test that docs/control-api.md shows, sent through the proxy.
      const reset = await fetch(new URL("/__control/reset", proxy.url), { method: "POST" });
      assert.equal(reset.status, 204);
      await round();
    });
    assert.deepEqual(failures(report), []);
    assert.equal(code, 0, "nothing fails the proxy's gate");
    // The proxy numbers the exchanges itself, from its own first.
    const restarted =
      /the state rules started again after 1 write outside the contract \(first: #\d+ POST \/__control\/reset\)/;
    assert.ok(
      (report.notes ?? []).some((note) => restarted.test(note)),
      (report.notes ?? []).join("\n"),
    );
    const cancelOnce = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .find((c) => c.id === "state.cancel-once");
    assert.equal(cancelOnce?.status, "passed", "both 204s were put to the test, each in its own round");
  });

  it("finds a double 204 across another API's write under --not-orders, which the barrier hid", async () => {
    const named = await doubleCancelAroundPets("pets-named", ["--not-orders", "/v1/pets"]);
    assert.ok(
      failures(named.report).some((failure) => /^state\.cancel-once: /.test(failure)),
      failures(named.report).join("\n"),
    );
    assert.equal(named.code, 1, "the gate fails");
    assert.ok(
      (named.report.notes ?? []).some((note) =>
        /^1 write outside the contract under the paths named as holding no orders \(first: #\d+ POST \/v1\/pets\)/.test(
          note,
        ),
      ),
      (named.report.notes ?? []).join("\n"),
    );
    assert.ok(!(named.report.notes ?? []).some((note) => /the state rules started again/.test(note)));
    // Without the option the pets' write is a barrier: the second 204 is a new round, and nothing fails.
    const unnamed = await doubleCancelAroundPets("pets-unnamed", []);
    assert.deepEqual(failures(unnamed.report), []);
    assert.ok(
      (unnamed.report.notes ?? []).some((note) =>
        /the state rules started again after 1 write outside the contract \(first: #\d+ POST \/v1\/pets\)/.test(
          note,
        ),
      ),
      (unnamed.report.notes ?? []).join("\n"),
    );
  });

  it("shows a finding's instants in ms from the proxy's start, within the report's duration", async () => {
    const { report } = await doubleCancelAroundPets("instants", ["--not-orders", "/v1/pets"]);
    const finding = failures(report).find((failure) => /^state\.cancel-once: /.test(failure)) ?? "";
    const instants = [...finding.matchAll(/\((\d+(?:\.\d+)?)–(\d+(?:\.\d+)?) ms\)/g)].flatMap((match) => [
      Number(match[1]),
      Number(match[2]),
    ]);
    assert.ok(instants.length >= 4, finding);
    for (const instant of instants)
      assert.ok(
        instant <= report.durationMs,
        `${instant} ms past the run's ${report.durationMs} ms: ${finding}`,
      );
  });

  it("honours --not-orders for POST /__control/reset, which does touch orders: the second 204 then fails", async () => {
    const { code, report } = await throughTheProxy(
      "reset-named",
      async (proxy) => {
        const headers = { authorization: `Bearer ${KEY}` };
        const cancel = () => fetch(`${proxy.url}/store/orders/3`, { method: "DELETE", headers });
        assert.equal((await cancel()).status, 204);
        const reset = await fetch(new URL("/__control/reset", proxy.url), { method: "POST" });
        assert.equal(reset.status, 204);
        assert.equal((await cancel()).status, 204);
      },
      ["--not-orders", "/__control/reset"],
    );
    // Told the reset touches no order, the rules read the second 204 as a second cancel of one order.
    assert.ok(
      failures(report).some((failure) => /^state\.cancel-once: /.test(failure)),
      failures(report).join("\n"),
    );
    assert.equal(code, 1);
  });

  it("refuses at start, in one line with exit 2, a --not-orders value that covers the orders' paths", async () => {
    const refused = await cli(
      ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--not-orders", "/v1/store"],
      NO_PROXY_ENV,
    );
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /^error: --not-orders "\/v1\/store" covers GET \/v1\/store\/orders, an operation of the contract: name only the paths of another API\n/m,
    );
  });

  it("finds nothing in explore --hooks mock-control run through it", async () => {
    let explored = { code: -1, stdout: "", stderr: "" };
    const { report } = await throughTheProxy("explore", async (proxy) => {
      explored = await cli(
        ["explore", "--base-url", proxy.url, "--api-key", KEY, "--hooks", "mock-control", "--budget", "3s"],
        NO_PROXY_ENV,
      );
    });
    assert.equal(explored.code, 0, explored.stdout + explored.stderr);
    assert.deepEqual(failures(report), []);
    const state = report.scenarios.find((scenario) => scenario.id === "state");
    // Between the hook's writes the rules still judge explore's cancels.
    const cancelOnce = state?.checks.find((check) => check.id === "state.cancel-once");
    assert.equal(cancelOnce?.status, "passed", "the state rules judged the rounds between the hook's writes");
    assert.ok(
      (report.notes ?? []).some((note) =>
        /the state rules started again after \d+ writes? outside the contract/.test(note),
      ),
      (report.notes ?? []).join("\n"),
    );
  });
});
