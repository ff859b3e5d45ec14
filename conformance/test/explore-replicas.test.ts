import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RedisService, type Service, startHaproxy, startRedis } from "../../test-support/services.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { explore } from "../explore/explore.ts";
import { MOCK_KEY } from "./mock-ids.ts";

const SEEDS = [1, 2];

describe("explore against two mock replicas on one Redis behind HAProxy", () => {
  let redis: RedisService;
  let replicas: MockProcess[];
  let balancer: Service;
  before(async () => {
    redis = await startRedis();
    replicas = await Promise.all([1, 2].map(() => startMockProcess(["--store", redis.url, "--quiet"])));
    balancer = await startHaproxy(replicas.map((replica) => Number(new URL(replica.url).port)));
  });
  after(async () => {
    await balancer.stop();
    await Promise.all(replicas.map((replica) => replica.stop()));
    await redis.stop();
  });

  it("finds nothing over several seeds, with clients that overlapped on one order", async () => {
    for (const seed of SEEDS) {
      const result = await explore({
        baseUrl: `http://127.0.0.1:${balancer.port}/v1`,
        apiKey: MOCK_KEY,
        hooks: "mock-control",
        session: `explore-replicas-${seed}`,
        seed,
        budgetMs: 2000,
        env: {},
      });
      assert.equal(
        result.finding,
        undefined,
        `seed ${seed}: ${JSON.stringify(result.finding?.minimal.verdict.findings)}`,
      );
      assert.equal(result.ended, "budget");
      assert.ok(result.coverage.concurrentPairs > 0, "no two operations on one order overlapped");
      assert.ok(result.coverage.listsConcurrentWithCancels > 0, "no list overlapped a cancel");
    }
  });
});
