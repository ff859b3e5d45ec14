import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Report } from "../../conformance/reports/report.ts";
import { MOCK_KEY } from "../../conformance/test/mock-ids.ts";
import { cli, NO_PROXY_ENV } from "../../conformance/test/run-cli.ts";
import {
  haproxyConfig,
  type RedisService,
  type Service,
  startHaproxy,
  startRedis,
} from "../../test-support/services.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { steadyLoad } from "./steady-load.ts";
import { AUTH } from "./support.ts";

const portOf = (mock: MockProcess) => Number(new URL(mock.url).port);

/** Requests through the balancer without pause, by a few workers. */
function balancedLoad(origin: string, workers: number, path = "/v1/store/orders") {
  return steadyLoad(async () => {
    const response = await fetch(`${origin}${path}`, { headers: AUTH });
    await response.arrayBuffer();
    return response.status;
  }, workers);
}

describe("two replicas on one Redis behind HAProxy (the recipe in docs/shared-state.md)", () => {
  let redis: RedisService;
  let replicas: MockProcess[];
  let balancer: Service;
  let origin: string;
  before(async () => {
    redis = await startRedis();
    replicas = await Promise.all(
      [1, 2].map(() => startMockProcess(["--store", redis.url, "--log-format", "json"])),
    );
    balancer = await startHaproxy(replicas.map(portOf));
    origin = `http://127.0.0.1:${balancer.port}`;
  });
  after(async () => {
    await balancer.stop();
    await Promise.all(replicas.map((replica) => replica.stop()));
    await redis.stop();
  });

  it("the docs give the very configuration tested here", () => {
    const docs = readFileSync(new URL("../../docs/shared-state.md", import.meta.url), "utf8");
    assert.ok(docs.includes(haproxyConfig(8080, [4011, 4012])), "docs/shared-state.md holds the recipe");
  });

  it("the whole conformance suite passes through the balancer, in a session, with round robin over both", async () => {
    const result = await cli(
      [
        "--base-url",
        `${origin}/v1`,
        "--hooks",
        "mock-control",
        "--session",
        "behind-haproxy",
        "--reporter",
        "json",
      ],
      { PETSTORE_API_KEY: MOCK_KEY, ...NO_PROXY_ENV },
    );
    assert.equal(result.code, 0, result.stderr + result.stdout.slice(0, 2000));
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.summary.failed, 0);
    assert.equal(report.summary.skipped, 0, "every scenario ran, the cancel race among them");
    for (const replica of replicas) {
      assert.match(replica.output(), /"session":"behind-haproxy"/, "each replica served part of the run");
    }
  });

  it("a replica killed with SIGKILL under load: HAProxy sends everything to the other, nothing fails or is lost", async () => {
    const [doomed, survivor] = replicas as [MockProcess, MockProcess];
    assert.equal(
      (await fetch(`${origin}/v1/store/orders/7`, { method: "DELETE", headers: AUTH })).status,
      204,
    );
    const load = balancedLoad(origin, 4);
    await load.answered(20);
    await doomed.stop("SIGKILL");
    // Fifty answers after the kill, however long a loaded machine takes to give them.
    await load.answered(50);
    const statuses = await load.stop();
    assert.deepEqual([...new Set(statuses)], [200], "every request answered 200");
    assert.equal(
      (await fetch(`${origin}/v1/store/orders/7`, { method: "DELETE", headers: AUTH })).status,
      409,
    );
    assert.equal(survivor.child.exitCode, null);
    // The killed replica comes back on the same store, as an orchestrator would restart it.
    replicas[0] = await startMockProcess(["--store", redis.url, "--quiet", "--port", String(portOf(doomed))]);
  });

  it("a replica stopped with SIGTERM under load drains: its requests are answered, the rest go to the other", async () => {
    await sleep(600); // the restarted replica is seen healthy again (rise 2 × 200 ms)
    const load = balancedLoad(origin, 4);
    await load.answered(20);
    assert.equal(await (replicas[1] as MockProcess).stop("SIGTERM"), 0);
    await load.answered(50);
    const statuses = await load.stop();
    assert.deepEqual([...new Set(statuses)], [200]);
  });
});
