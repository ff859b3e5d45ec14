import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { harEntryOf } from "../proxy/har-entry.ts";
import { formSecrets } from "../target/credentials.ts";
import { secretHider } from "../target/secret-hider.ts";

/**
 * An exchange with a form body, answered with `echoed` in a JSON body, hidden as the proxy hides it: by the
 * exchange's hider, which holds its form's credentials (read as the body went on).
 */
function formExchange(body: string, echoed: string, type = "application/x-www-form-urlencoded") {
  return harEntryOf(
    {
      startedAt: 0,
      durationMs: 1,
      waitMs: 1,
      method: "DELETE",
      url: new URL("http://127.0.0.1:1/v1/store/orders/5"),
      requestHeaders: [["Content-Type", type]],
      requestBody: Buffer.from(body),
      response: {
        status: 401,
        statusText: "Unauthorized",
        headers: [["Content-Type", "application/json"]],
        body: Buffer.from(JSON.stringify({ message: echoed })),
        size: 0,
      },
    },
    new Set(),
    secretHider(formSecrets(body)),
  );
}

describe("har-entry", () => {
  it("masks a form body's credential parameters, and hides their values echoed", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("access_token", "token", "client_secret", "password", "private_token", "code"),
        fc.stringMatching(/^[A-Za-z0-9._~-]{8,32}$/),
        fc.constantFrom("", "a=1&", "grant_type=client_credentials&"),
        (name, value, before) => {
          const entry = formExchange(`${before}${name}=${encodeURIComponent(value)}&b=2`, `bad ${value}`);
          const written = JSON.stringify(entry);
          assert.ok(!written.includes(value), written);
          assert.equal(entry.request.postData?.text, `${before}${name}=***&b=2`);
        },
      ),
    );
  });

  it("leaves a form's plain parameters and other bodies as sent", () => {
    assert.equal(formExchange("a=1&theme=dark", "").request.postData?.text, "a=1&theme=dark");
    assert.equal(formExchange('{"note":"x"}', "", "application/json").request.postData?.text, '{"note":"x"}');
  });
});
