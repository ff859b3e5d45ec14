import assert from "node:assert/strict";
import { chmodSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { UsageError } from "../../common/command-line.ts";
import { judgeListBody } from "../../conformance/judging/list-judge.ts";
import { runConformance } from "../../conformance/suite/runner.ts";
import { MILLION_ORDERS_START_MS, runMainToExit, startMockProcess } from "../../test-support/spawn-mock.ts";
import { generatedFixtureText, generateOrders } from "../core/generate.ts";
import { createSeed } from "../core/seed.ts";
import { createPetstoreMock } from "../in-process.ts";
import { parseCliOptions } from "../options.ts";
import { AUTH, contract, DEV_KEY, writeFixture } from "./support.ts";

const listOf = async (url: string, headers: Record<string, string> = AUTH) => {
  const response = await fetch(`${url}/store/orders`, { headers });
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
};

describe("generated worlds", () => {
  it("are valid orders with unique ids, pending and shipped, ids beyond 2^53 exact", () => {
    const seed = createSeed(generateOrders(5000, 7));
    const verdict = judgeListBody(seed.listBody, { validateOrder: contract.schema("Order") });
    assert.equal(verdict.count, 5000);
    assert.deepEqual(verdict.invalid, { count: 0, first: [] });
    assert.equal(verdict.duplicates.count, 0);
    const statuses = new Set([...seed.all()].map((order) => order.status));
    assert.deepEqual([...statuses].sort(), ["pending", "shipped"]);
    assert.ok((verdict.orders.largest ?? 0n) > 2n ** 53n);
    assert.ok(verdict.orders.has(String(verdict.orders.largest)), "the largest id is listed digit for digit");
  });

  it("are the same bytes for the same seed, and differ for another", () => {
    const text = (seed: number) => [...generatedFixtureText(300, seed)].join("");
    assert.equal(text(11), text(11));
    assert.notEqual(text(11), text(12));
  });

  it("come from petstore-mock --generate, and --write-fixtures writes the world it serves", async () => {
    const path = writeFixture("", "generated.json");
    const written = await runMainToExit(["--generate", "400", "--seed", "9", "--write-fixtures", path]);
    assert.deepEqual(written, {
      code: 0,
      stdout: `wrote a generated world of 400 orders (--seed 9) to ${path}\n`,
      stderr: "",
    });
    assert.match(readFileSync(path, "utf8"), /^\{"apiKeys":\["dev-key-123"\],"orders":\[\n\{"id":/);
    const generated = await startMockProcess(["--quiet", "--generate", "400", "--seed", "9"]);
    const fromFile = await startMockProcess(["--quiet", "--fixtures", path]);
    try {
      // The start-up line names what is served: no fixture file for a generated world.
      assert.match(generated.output(), /^ {2}fixtures: none, a generated world \(400 orders, --seed 9\)$/m);
      assert.match(fromFile.output(), /^ {2}fixtures: .*generated\.json \(400 orders\)$/m);
      assert.deepEqual(await listOf(generated.url), await listOf(fromFile.url));
      assert.equal(JSON.parse((await listOf(generated.url)).toString()).length, 400);
    } finally {
      await Promise.all([generated.stop(), fromFile.stop()]);
    }
  });

  it("--write-fixtures keeps a file's permissions, and makes a new file of given keys its owner's alone", async () => {
    const kept = writeFixture("", "kept.json");
    chmodSync(kept, 0o600);
    assert.equal((await runMainToExit(["--generate", "3", "--write-fixtures", kept])).code, 0);
    assert.equal(statSync(kept).mode & 0o777, 0o600);
    const keyed = join(dirname(kept), "keyed.json");
    const written = await runMainToExit([
      "--generate",
      "3",
      "--api-key",
      "secret-key-1",
      "--write-fixtures",
      keyed,
    ]);
    assert.equal(written.code, 0, written.stderr);
    assert.equal(statSync(keyed).mode & 0o777, 0o600);
    assert.match(readFileSync(keyed, "utf8"), /"apiKeys":\["secret-key-1"\]/);
  });

  it("--write-fixtures of a secret key over a file its group or others can read makes it 0600, and says so in one line", async () => {
    const shared = writeFixture("", "shared.json");
    chmodSync(shared, 0o644);
    const secret = await runMainToExit([
      "--generate",
      "3",
      "--api-key",
      "secret-key-1",
      "--write-fixtures",
      shared,
    ]);
    assert.equal(secret.code, 0, secret.stderr);
    assert.equal(statSync(shared).mode & 0o777, 0o600);
    assert.match(readFileSync(shared, "utf8"), /"apiKeys":\["secret-key-1"\]/);
    const notes = secret.stderr.split("\n").filter((line) => line !== "");
    assert.equal(notes.length, 1, secret.stderr);
    assert.match(notes[0] as string, /shared\.json was readable by its group or others \(0644\).*now 0600/);
    assert.doesNotMatch(secret.stderr + secret.stdout, /secret-key-1/);

    const group = writeFixture("", "group.json");
    chmodSync(group, 0o640);
    assert.equal(
      (await runMainToExit(["--generate", "3", "--api-key", "secret-key-1", "--write-fixtures", group])).code,
      0,
    );
    assert.equal(statSync(group).mode & 0o777, 0o600);

    const devKey = writeFixture("", "dev.json");
    chmodSync(devKey, 0o644);
    const dev = await runMainToExit(["--generate", "3", "--api-key", DEV_KEY, "--write-fixtures", devKey]);
    assert.equal(statSync(devKey).mode & 0o777, 0o644, "the public dev key leaves the file as it was");
    assert.equal(dev.stderr, "");
  });

  it("come from createPetstoreMock({ generate }), with the dev key unless keys are given", async () => {
    const mock = createPetstoreMock({ generate: { orders: 120, seed: 3 } });
    const response = await mock.handle(new Request("http://mock.test/v1/store/orders", { headers: AUTH }));
    assert.equal(((await response.json()) as unknown[]).length, 120);
    const keyed = createPetstoreMock({ generate: { orders: 5 }, apiKeys: ["other-key"] });
    const refused = await keyed.handle(new Request("http://mock.test/v1/store/orders", { headers: AUTH }));
    assert.equal(refused.status, 401);
    assert.throws(
      () => createPetstoreMock({ generate: { orders: -1 } }),
      /generate.orders must be a whole number/,
    );
  });

  it("refuses options that do not go with --generate, in one line each", () => {
    const refusal = (argv: string[]) => {
      try {
        parseCliOptions(argv, {});
      } catch (error) {
        assert.ok(error instanceof UsageError);
        return error.message;
      }
      return assert.fail("accepted");
    };
    assert.match(
      refusal(["--generate", "10", "--fixtures", "f.json"]),
      /--generate and --fixtures cannot be used together/,
    );
    assert.match(refusal(["--generate", "10", "--watch"]), /--watch reloads a fixture file/);
    assert.match(refusal(["--seed", "3"]), /--seed needs --generate N/);
    assert.match(refusal(["--warm-cache", "--", "npm", "test"]), /--warm-cache .* wraps no COMMAND/);
    assert.match(refusal(["--write-fixtures", "f.json"]), /--write-fixtures needs --generate N/);
    assert.match(refusal(["--generate", "ten"]), /--generate must be a whole number of orders/);
  });
});

describe("the mock with a million orders", () => {
  it("passes the whole conformance suite, every list judged whole", async () => {
    const mock = await startMockProcess(["--quiet", "--generate", "1000000"], {}, MILLION_ORDERS_START_MS);
    try {
      const report = await runConformance({
        baseUrl: mock.url,
        apiKey: "dev-key-123",
        hooks: "mock-control",
        session: "a-million",
        raceConcurrency: 5,
        // Five of these lists stream at once during the race; beside the rest of the suite a list can go
        // longer than the default 10 s without a byte.
        timeoutMs: 60_000,
        env: {},
      });
      const failures = report.scenarios.flatMap((s) => s.checks.filter((c) => c.status === "failed"));
      assert.deepEqual(failures, []);
      const body = report.scenarios.flatMap((s) => s.checks).find((c) => c.id === "list-orders.list.body");
      assert.match(body?.message ?? "", /^an array of 100000\d Order records$/);
    } finally {
      await mock.stop();
    }
  });
});

describe("reloading a large world", () => {
  it("keeps answering while --watch reads a replaced file, then serves the new world", async () => {
    const path = writeFixture([...generatedFixtureText(300_000, 1)].join(""), "large.json");
    const mock = await startMockProcess(["--quiet", "--watch", "--fixtures", path], {}, 60_000);
    try {
      const health = `${mock.url.replace(/\/v1$/, "")}/__health`;
      writeFileSync(`${path}.tmp`, [...generatedFixtureText(400_000, 2)].join(""));
      renameSync(`${path}.tmp`, path);
      // Every request sent while the new file is read is answered; that the read leaves the event loop free
      // between its pieces is shown, by counting turns rather than time, in fixtures.test.ts.
      while (!mock.output().includes("fixtures reloaded")) {
        const response = await fetch(health);
        assert.equal(response.status, 200);
        await response.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.match(mock.output(), /fixtures reloaded: .* \(400000 orders\)/);
      assert.equal(JSON.parse((await listOf(mock.url)).toString()).length, 400_000);
    } finally {
      await mock.stop();
    }
  });
});
