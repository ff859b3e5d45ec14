import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { BASIC_PROBE_USER, headerSecrets, requestSecrets } from "../target/credentials.ts";
import { hideSecrets } from "../target/secret-hider.ts";

/** What an upstream's echo of `echoed` shows once the request's own secrets are hidden in it. */
function echoOf(rawHeaders: string[], echoed: string, target = "/v1/store/orders"): string {
  return hideSecrets(`note: ${echoed}.`, requestSecrets(rawHeaders, target));
}

const token = fc
  .array(fc.constantFrom(..."ABCDEFGHKMNPQRSTWXYZ0123456789-_.~!#$%&'*+^`|"), {
    minLength: 4,
    maxLength: 24,
  })
  .map((characters) => characters.join(""));

describe("credentials", () => {
  it("hides a quoted cookie's value echoed without its quotes", () => {
    assert.equal(echoOf(["Cookie", 'sid="QUOTEDCOOKIEVAL"'], "QUOTEDCOOKIEVAL"), "note: ***.");
    assert.equal(echoOf(["Cookie", 'a=1; sid="QUOTEDCOOKIEVAL"'], '"QUOTEDCOOKIEVAL"'), "note: ***.");
  });

  it("hides any quoted cookie's value, with or without its quotes", () => {
    fc.assert(
      fc.property(token, (value) => {
        const raw = ["Cookie", `theme=dark; sid="${value}"`];
        assert.equal(echoOf(raw, value), "note: ***.");
        assert.equal(echoOf(raw, `"${value}"`), "note: ***.");
      }),
    );
  });

  it("hides the user of Basic credentials, which some APIs take as their key", () => {
    const basic = (pair: string) => `Basic ${Buffer.from(pair).toString("base64")}`;
    assert.equal(echoOf(["Authorization", basic("BASICUSERNAME:pw12345")], "BASICUSERNAME"), "note: ***.");
    assert.equal(
      echoOf(["Authorization", basic("sk_live_KEY123:")], "user sk_live_KEY123"),
      "note: user ***.",
    );
  });

  it("leaves a Basic user shorter than four characters, and the suite's probe user, in the text", () => {
    const basic = (pair: string) => `Basic ${Buffer.from(pair).toString("base64")}`;
    assert.equal(echoOf(["Authorization", basic("bob:pw12345")], "bob"), "note: bob.");
    assert.deepEqual(
      headerSecrets("authorization", basic(`${BASIC_PROBE_USER}:key-1234`)).includes(BASIC_PROBE_USER),
      false,
    );
  });

  it("hides each item of a credential list separated by white space, commas or both, and the whole value", () => {
    assert.equal(echoOf(["X-Api-Key", "APIKEYSPACE1 other-key"], "APIKEYSPACE1"), "note: ***.");
    assert.equal(echoOf(["X-Api-Key", "APIKEYSPACE1\tother-key"], "other-key"), "note: ***.");
    assert.equal(echoOf(["X-Api-Key", "first-key, second-key third-key"], "third-key"), "note: ***.");
    assert.equal(
      echoOf(["X-Api-Key", "first-key, second-key third-key"], "second-key third-key"),
      "note: ***.",
    );
    assert.equal(echoOf(["X-Api-Key", "APIKEYSPACE1 other-key"], "APIKEYSPACE1 other-key"), "note: ***.");
  });

  it("hides every item of a list of keys, whatever separates them", () => {
    const separator = fc.constantFrom(" ", "\t", ",", ", ", " ,  ");
    fc.assert(
      fc.property(fc.array(fc.tuple(token, separator), { minLength: 1, maxLength: 5 }), (items) => {
        const value = items
          .map(([item, between]) => item + between)
          .join("")
          .trim();
        const raw = ["X-Api-Key", value];
        for (const [item] of items) assert.ok(!echoOf(raw, item).includes(item), `${item} of ${value}`);
      }),
    );
  });

  it("hides a token in a secret header's words, never the scheme's name before it", () => {
    const forms = headerSecrets("x-upstream-auth", "Bearer abcd1234");
    assert.ok(forms.includes("abcd1234"));
    assert.ok(!forms.includes("Bearer"));
    assert.equal(hideSecrets("Bearer abcd1234 and abcd1234", forms), "*** and ***");
    assert.equal(hideSecrets("a Bearer token", forms), "a Bearer token");
  });
});
