import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { renderExploreScript } from "../explore/report-script.ts";
import { recordedResult } from "./explore-recorded-result.ts";

const KEY = "sk-live-SECRET-123";
const MASKED = "gw-SECRET-456";

describe("explore's reproduction script", () => {
  it("rebuilds a shown header or the session that holds the key or a masked value from its variable", () => {
    const text = renderExploreScript(recordedResult(), {
      apiKey: KEY,
      headers: { "X-Api-Key": KEY, "X-Gateway": MASKED, "X-Trace": `Bearer ${MASKED}`, "X-Plain": "visible" },
      showHeaders: ["X-Api-Key", "X-Trace", "X-Plain"],
      session: `run-${KEY}-1`,
    });
    assert.doesNotMatch(text, /SECRET/);
    assert.match(text, /X-Api-Key from \$PETSTORE_API_KEY/);
    assert.match(text, /X-Trace from \$X_GATEWAY/);
    assert.match(text, /X-Plain as the run sent it/);
    assert.match(text, /X-Mock-Session from \$X_MOCK_SESSION/);
    assert.match(text, /^\/\/ {3}PETSTORE_API_KEY=… X_GATEWAY=… X_MOCK_SESSION=… node /m);
  });

  it("never writes the key or a masked value as a header, wherever a shown value holds it", () => {
    const secret = fc.string({ minLength: 4, maxLength: 12 }).filter((value) => /^[\x21-\x7e]+$/.test(value));
    fc.assert(
      fc.property(secret, secret, fc.string(), fc.string(), (key, masked, before, after) => {
        fc.pre(!key.includes(masked) && !masked.includes(key));
        const text = renderExploreScript(recordedResult(), {
          apiKey: key,
          headers: {
            "X-Masked": masked,
            "X-Shown": `${before}${key}${after}`,
            "X-Other": `${before}${masked}`,
          },
          showHeaders: ["X-Shown", "X-Other"],
          session: `${after}${masked}`,
        });
        const headers = JSON.parse(/^const runHeaders = (.*);$/m.exec(text)?.[1] ?? "null");
        for (const value of Object.values(headers) as { text?: string }[])
          assert.ok(value.text === undefined || (!value.text.includes(key) && !value.text.includes(masked)));
      }),
    );
  });

  it("says what a run that found nothing covered, overlap included", () => {
    const { finding: _, ...passed } = recordedResult({ ended: "budget" });
    const text = renderExploreScript(passed);
    assert.match(
      text,
      /^\/\/ explore found nothing \(covered \d+ histories, \d+ operations, \d+ orders, up to \d+ clients; overlap: \d+ pairs of concurrent operations on one order, \d+ lists concurrent with a cancel\): there is no program to play again\.\n$/,
    );
  });
});
