import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { assertError, type CaseApi, caseApi, DASHBOARD_CASES } from "./control-cases.ts";
import { SHARED_CASES } from "./shared-cases.ts";
import { bundledCore } from "./support.ts";
import { coreTransport, httpTransport } from "./transports.ts";

describe("the API, control API, sessions and forced responses: in-process (the core)", () => {
  const transport = coreTransport(bundledCore());
  for (const [index, testCase] of [...SHARED_CASES, ...DASHBOARD_CASES].entries()) {
    it(testCase.name, () => testCase.run(caseApi(transport, `in-process-${index}`)));
  }
});

describe("the API, control API, sessions and forced responses: the real process over HTTP", () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());
  for (const [index, testCase] of [...SHARED_CASES, ...DASHBOARD_CASES].entries()) {
    it(testCase.name, () =>
      testCase.run(caseApi(httpTransport(new URL(mock.url).origin), `process-${index}`)),
    );
  }

  it("says where the control API is in its start-up lines", () => {
    assert.match(mock.output(), new RegExp(`control API: ${new URL(mock.url).origin}/__control\\n`));
  });
});

describe("a world at --max-memory: its writes refused, not grown; its history not counted", () => {
  const transport = coreTransport(bundledCore({ maxSessionBytes: 64 * 1024 }));
  const batch = (api: CaseApi, create: bigint[], remove: bigint[] = []) =>
    api.send("POST", "/__control/orders", {
      body: `{"create":[${create.map((id) => `{"id":${id},"status":"pending"}`).join(",")}],"remove":[${remove.join(",")}]}`,
    });
  const total = async (api: CaseApi, defaultWorld: boolean) =>
    Number((await api.send("GET", "/__control/orders?limit=1", { defaultWorld })).headers["x-total-count"]);

  for (const defaultWorld of [true, false]) {
    it(`refuses to create past it with 409 world_full, and takes orders again once some are removed (${defaultWorld ? "the default world" : "a session"})`, async () => {
      const api = caseApi(transport, "full");
      const send: CaseApi["send"] = (method, path, options) =>
        api.send(method, path, { ...options, defaultWorld });
      const full = { ...api, send };
      let next = 1_000_000n;
      let refused: Awaited<ReturnType<typeof batch>> | undefined;
      let before = 0;
      for (let tries = 0; tries < 100 && !refused; tries++) {
        const ids = Array.from({ length: 100 }, () => next++);
        before = await total(full, defaultWorld);
        const answer = await batch(full, ids);
        if (answer.status !== 200) refused = answer;
      }
      assert.ok(refused, "a 64 KiB world is full before 10,000 new orders");
      assertError(
        refused,
        409,
        "world_full",
        /--max-memory.*remove orders or reset it.*Nothing of this batch/,
      );
      assert.equal(await total(full, defaultWorld), before, "a refused batch created none of its orders");
      const removing = Array.from({ length: 100 }, () => next++);
      assertError(await batch(full, removing, [1_000_000n]), 409, "world_full");
      assert.equal(await total(full, defaultWorld), before, "a refused batch removed none of its ids");
      // Filled to the brim one order at a time, a write past it is refused and changes nothing.
      let put = await send("PUT", `/__control/orders/${next}`, { body: { petId: 1, status: "pending" } });
      for (let tries = 0; tries < 100 && put.status === 201; tries++) {
        put = await send("PUT", `/__control/orders/${++next}`, { body: { petId: 1, status: "pending" } });
      }
      assertError(put, 409, "world_full");
      const held = await total(full, defaultWorld);
      assertError(
        await send("PUT", `/__control/orders/${next}`, { body: { petId: 1, status: "pending" } }),
        409,
        "world_full",
      );
      assert.equal(await total(full, defaultWorld), held, "a refused write changes nothing");
      assert.ok(held < 12 + 10_000);
      const removed = await batch(
        full,
        [],
        Array.from({ length: 100 }, (_, index) => 1_000_000n + BigInt(index)),
      );
      assert.equal(removed.status, 200, removed.text);
      const again = await send("PUT", `/__control/orders/${next}`, { body: { petId: 1, status: "pending" } });
      assert.equal(again.status, 201, again.text);
    });
  }

  it("never fills from adding and removing the same orders again and again", async () => {
    const api = caseApi(transport, "churn");
    const ids = Array.from({ length: 100 }, (_, index) => 5_000n + BigInt(index));
    for (let round = 0; round < 1_000; round++) {
      const answer = await batch(api, ids, ids);
      assert.equal(answer.status, 200, `round ${round}: ${answer.text}`);
    }
    assert.equal(await total(api, false), 12);
  });
});
