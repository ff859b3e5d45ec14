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

  it("hides a secret in every part of the entry: reason phrase, header and parameter names, the comment", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{12,32}$/), fc.boolean(), (secret, upper) => {
        const echoed = upper ? secret.toUpperCase() : secret;
        const entry = harEntryOf(
          {
            startedAt: 0,
            durationMs: 1,
            waitMs: 1,
            method: "GET",
            url: new URL(`http://127.0.0.1:1/v1/store/orders?${secret}=1&q=${secret}`),
            requestHeaders: [
              [`x-${secret}`, "1"],
              ["Authorization", `Bearer ${secret}`],
            ],
            requestBody: Buffer.alloc(0),
            response: {
              status: 200,
              statusText: `Bad token ${echoed}`,
              headers: [
                [`x-echo-${echoed}`, "1"],
                ["Content-Type", `application/json; echo=${echoed}`],
              ],
              body: Buffer.from(`{"echo":"${echoed}"}`),
              size: 0,
            },
            comment: `no answer: ${echoed}`,
          },
          new Set(),
          secretHider([secret]),
        );
        const written = JSON.stringify(entry);
        assert.ok(!written.toLowerCase().includes(secret.toLowerCase()), written);
        assert.equal(entry.response.statusText, "Bad token ***");
        assert.equal(entry.response.headers[0]?.name, "x-echo-***");
      }),
    );
  });

  it("masks a JSON request body's credential members, and leaves its other members", () => {
    const body = JSON.stringify({ grant_type: "password", password: "pa55", refresh_token: "r-1", n: 2 });
    const text = formExchange(`${body} {"client_secret": 12345}`, "", "application/json").request.postData
      ?.text;
    assert.equal(
      text,
      '{"grant_type":"password","password":"***","refresh_token":"***","n":2} {"client_secret": "***"}',
    );
  });

  it("reads a JSON body's members in one pass: strings that never close cost their length, a cut credential is masked", () => {
    // An unclosed string of escaped quotes: a pattern retried at each quote read it again to its end.
    const unclosed = `{"a":"${'\\"'.repeat(100_000)}`;
    assert.equal(formExchange(unclosed, "", "application/json").request.postData?.text, unclosed);
    const cut = '{"user":"u","password":"hunter2-and-so';
    assert.equal(
      formExchange(cut, "", "application/json").request.postData?.text,
      '{"user":"u","password":"***"',
      "a credential's value cut short is masked all the same",
    );
    assert.equal(
      formExchange('{"note":"password","x":{"token":"t"}}', "", "application/json").request.postData?.text,
      '{"note":"password","x":{"token":"***"}}',
      "a value that reads as a credential's name is no name",
    );
  });

  it("shows no start of a secret a body was cut in, whatever the place of the cut", () => {
    const secret = "sk_live-CutBoundary_Secret";
    const spellings = [secret, encodeURIComponent(`${secret}/`), JSON.stringify(`${secret}\n`).slice(1, -1)];
    fc.assert(
      fc.property(fc.constantFrom(...spellings), fc.nat(40), fc.boolean(), (spelled, cutAt, binary) => {
        const kept = `${"x".repeat(100)}${spelled}`.slice(0, 100 + Math.min(cutAt, spelled.length - 1));
        const entry = harEntryOf(
          {
            startedAt: 0,
            durationMs: 1,
            waitMs: 1,
            method: "POST",
            url: new URL("http://127.0.0.1:1/v1/store/orders"),
            requestHeaders: [["Content-Type", "text/plain"]],
            requestBody: Buffer.from(kept),
            requestBodyCut: true,
            response: {
              status: 200,
              statusText: "OK",
              headers: [["Content-Type", binary ? "application/octet-stream" : "application/json"]],
              body: Buffer.from(kept),
              size: 0,
              cut: true,
            },
          },
          new Set(),
          secretHider([secret, `${secret}/`, `${secret}\n`]),
        );
        const { content } = entry.response;
        const shown = binary ? Buffer.from(content.text ?? "", "base64").toString("latin1") : content.text;
        for (const text of [shown ?? "", entry.request.postData?.text ?? ""])
          assert.ok(!text.includes(`x${spelled.slice(0, 2)}`), `${JSON.stringify(text)} shows the start`);
        assert.match(entry.comment ?? "", /cut short/);
      }),
    );
  });
});
