import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { withHttpServer } from "../../test-support/http-server.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { RACE_ID, TARGET_KEY, type TargetBehaviour, withTarget } from "../../test-support/target-server.ts";
import { gateExitCode } from "../reports/outcome.ts";
import type { Report } from "../reports/report.ts";
import { runConformance } from "../suite/runner.ts";
import { MOCK_KEY } from "./mock-ids.ts";

const race = (report: Report) => report.scenarios.find((scenario) => scenario.id === "cancel-race");

function raceAgainst(behaviour: TargetBehaviour, raceConcurrency?: number): Promise<Report> {
  return withTarget(behaviour, (url) =>
    runConformance({
      baseUrl: url,
      apiKey: TARGET_KEY,
      raceOrderId: RACE_ID,
      only: ["cancel-race"],
      env: {},
      ...(raceConcurrency !== undefined ? { raceConcurrency } : {}),
    }),
  );
}

describe("the race scenario: concurrent cancels of one pending order", () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());

  it("passes against this project's mock, with the order from the mock-control hook, and says how close together the cancels went", async () => {
    const report = await runConformance({
      baseUrl: mock.url,
      apiKey: MOCK_KEY,
      hooks: "mock-control",
      session: "race-run",
      only: ["cancel-race"],
    });
    const scenario = race(report);
    assert.equal(scenario?.status, "passed", JSON.stringify(scenario?.checks, null, 1));
    const verdict = scenario?.checks.find((check) => check.id === "cancel-race.cancel.one-204");
    assert.match(
      verdict?.message ?? "",
      /^exactly one 204: 20 cancels sent within \d+\.\d ms of each other \(/,
    );
    assert.match(verdict?.message ?? "", /204×1/);
    assert.ok(scenario?.checks.some((check) => check.id === "cancel-race.cancel.listed-once"));
    assert.ok(scenario?.checks.some((check) => check.id === "cancel-race.cancel.list-during.body"));
  });

  it("fails a server whose cancel checks, waits, then writes, with the count of 204s", async () => {
    const report = await raceAgainst({ racyCancel: true }, 10);
    const verdict = race(report)?.checks.find((check) => check.id === "cancel-race.cancel.one-204");
    assert.equal(verdict?.status, "failed");
    assert.match(verdict?.message ?? "", /^10 cancels were 204, so the order was cancelled 10 times: /);
    assert.match(
      verdict?.reproduce ?? "",
      /^# A race: 10 requests at once.*\nfor i in \$\(seq 10\); do\n {2}curl .* &\n/s,
      "cancels sent together again",
    );
  });

  it("fails a server that answers 5xx under concurrency, naming the status check", async () => {
    const report = await raceAgainst({ failsUnderConcurrency: true });
    const failed = race(report)?.checks.filter((check) => check.status === "failed") ?? [];
    const ids = new Set(failed.map((check) => check.id));
    assert.ok(ids.has("cancel-race.cancel.status"), [...ids].join(", "));
    assert.match(
      failed.find((check) => check.id === "cancel-race.cancel.status")?.message ?? "",
      /got 503: a 5xx is never an acceptable answer/,
    );
  });

  for (const held of ["a 409", "the 204"] as const)
    it(`leaves the race not judged when ${held} is held past the run's --deadline: it may have been a 204`, async () => {
      const order = '{"id":3,"petId":2,"quantity":1,"shipDate":"2026-01-01T00:00:00Z","complete":false}';
      let arrivals = 0;
      const report = await withHttpServer(
        (request, response) => {
          if (request.headers.authorization !== "Bearer k") {
            response.writeHead(401, { "content-type": "application/json" });
            response.end('{"code":"unauthorized","message":"no key","status":401}');
          } else if (request.method === "GET") {
            response.writeHead(200, { "content-type": "application/json" }).end(`[${order}]`);
          } else if (++arrivals === (held === "the 204" ? 1 : 5)) {
            // Never answered while the run lasts: the server closes it when the test ends.
          } else if (arrivals === (held === "the 204" ? 2 : 1)) {
            response.writeHead(204).end();
          } else {
            response.writeHead(409, { "content-type": "application/json" });
            response.end('{"code":"conflict","message":"not pending","status":409}');
          }
        },
        (url) =>
          runConformance({
            baseUrl: url,
            apiKey: "k",
            raceOrderId: "3",
            raceConcurrency: 5,
            deadlineMs: 1_000,
            only: ["cancel-race"],
            env: {},
          }),
      );
      const checks = race(report)?.checks ?? [];
      assert.deepEqual(
        checks.filter((check) => check.status === "failed").map((check) => check.message),
        [],
      );
      const verdict = checks.find((check) => check.id === "cancel-race.cancel.one-204");
      assert.equal(verdict?.notJudged, true, verdict?.message);
      assert.match(
        verdict?.message ?? "",
        /^not judged: 1 cancel got no answer within the run's limit and may have been a 204; raise deadlineMs to judge it: 5 cancels sent/,
      );
      assert.equal(checks.find((check) => check.id === "cancel-race.cancel.status")?.notJudged, true);
      assert.equal(gateExitCode(report), 2, "not everything checked: neither a pass nor a failure");
    });

  it("is skipped, with the reason, when no race order is given", async () => {
    const report = await withTarget({}, (url) =>
      runConformance({ baseUrl: url, apiKey: TARGET_KEY, only: ["cancel-race"], env: {} }),
    );
    assert.equal(race(report)?.status, "skipped");
    assert.match(race(report)?.reason ?? "", /^no --race-order-id given/);
  });
});
