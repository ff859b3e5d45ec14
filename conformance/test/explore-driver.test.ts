import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ValidateFunction } from "ajv";
import { builtInContract } from "../../contract/built-in.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { type Driver, InFlight, pacing, playProgram } from "../explore/driver.ts";
import type { Program } from "../explore/program.ts";
import { WatchedLists } from "../explore/watched-list.ts";
import { createHttpClient, type HttpClient } from "../target/http-client.ts";
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
    const contract = builtInContract();
    driver = {
      client,
      apiKey: MOCK_KEY,
      lists: new WatchedLists({
        validateOrder: contract.schema("Order") as ValidateFunction,
        orderPlan: contract.flatPlan("Order"),
      }),
      pace: pacing(undefined),
      unjudged: { cancelAnswers: new Map() },
      inFlight: new InFlight(),
    };
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
