import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ScenarioResult } from "../reports/report.ts";
import { redactSecrets } from "../target/redact.ts";

describe("redactSecrets", () => {
  it("hides a secret echoed in a response header's name and value, in any case, and in the message", () => {
    const secret = "sk_live-Tok3nAlpha_Zulu";
    const scenario = {
      checks: [
        {
          id: "x",
          status: "failed",
          message: `got ${secret.toUpperCase()}`,
          response: { status: 200, headers: { [`x-echo-${secret}`]: secret, other: "1" }, body: secret },
        },
      ],
    } as unknown as ScenarioResult;
    const [check] = redactSecrets({ scenarios: [scenario] }, [secret]).scenarios[0]?.checks ?? [];
    assert.deepEqual(check?.response, {
      status: 200,
      headers: { "x-echo-***": "***", other: "1" },
      body: "***",
    });
    assert.equal(check?.message, "got ***");
  });

  it("keeps two header names a secret made alike as two headers", () => {
    const secret = "sk_live-Tok3nAlpha_Zulu";
    const scenario = {
      checks: [
        {
          id: "x",
          status: "failed",
          message: "m",
          response: {
            status: 200,
            headers: { [`x-${secret}`]: "a", [`x-${secret.toUpperCase()}`]: "b" },
            body: "",
          },
        },
      ],
    } as unknown as ScenarioResult;
    const [check] = redactSecrets({ scenarios: [scenario] }, [secret]).scenarios[0]?.checks ?? [];
    assert.deepEqual(check?.response?.headers, { "x-***": "a", "x-*** (2)": "b" });
  });
});
