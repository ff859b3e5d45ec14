import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { type Driver, playProgram } from "../explore/driver.ts";
import type { Program } from "../explore/program.ts";
import { createHttpClient, type HttpClient } from "../target/http-client.ts";
import { testDriver } from "./explore-test-driver.ts";
import { MOCK_KEY } from "./mock-ids.ts";

describe("explore's driver against the project's mock", () => {
  let mock: MockProcess;
  let client: HttpClient;
  let driver: Driver;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
    client = await createHttpClient(new URL(mock.url), {
      timeoutMs: 5000,
      commonHeaders: { "x-mock-session": "explore-driver" },
    });
    driver = testDriver(client, MOCK_KEY);
  });
  after(async () => {
    client.close();
    await mock.stop();
  });

  const twoLists: Program = [
    [
      { wait: 0, action: { op: "list" } },
      { wait: 0, action: { op: "list" } },
    ],
  ];
  const slots = { kinds: [], ids: [] };

  it("plays every step of a program", async () => {
    const history = await playProgram(driver, twoLists, slots);
    assert.deepEqual(
      history.operations.map((operation) => [operation.op, operation.status]),
      [
        ["list", 200],
        ["list", 200],
      ],
    );
  });

  it("starts no step once the run's budget is spent, even within a history", async () => {
    const history = await playProgram(driver, twoLists, slots, performance.now() - 1);
    assert.deepEqual(history.operations, []);
  });
});
