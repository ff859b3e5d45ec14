import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { caseApi, DASHBOARD_CASES } from "./control-cases.ts";
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
