import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { runProxy } from "../../conformance/proxy/run-proxy.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { bearerToken, isToken68 } from "../bearer.ts";

const TOKEN68_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/";
const token68 = fc
  .tuple(
    fc.string({ unit: fc.constantFrom(...TOKEN68_CHARACTERS), minLength: 1, maxLength: 40 }),
    fc.nat({ max: 3 }),
  )
  .map(([body, padding]) => body + "=".repeat(padding));
const schemeCase = fc
  .array(fc.boolean(), { minLength: 6, maxLength: 6 })
  .map((upper) =>
    [..."bearer"].map((letter, index) => (upper[index] ? letter.toUpperCase() : letter)).join(""),
  );
const spaces = fc.integer({ min: 1, max: 4 }).map((count) => " ".repeat(count));
const fieldWhiteSpace = fc.string({ unit: fc.constantFrom(" ", "\t"), maxLength: 3 });

describe("bearer", () => {
  it("reads the token of every well-formed credential: scheme in any case, spaces, white space around", () => {
    fc.assert(
      fc.property(
        fieldWhiteSpace,
        schemeCase,
        spaces,
        token68,
        fieldWhiteSpace,
        (lead, scheme, gap, token, trail) => {
          assert.equal(bearerToken(`${lead}${scheme}${gap}${token}${trail}`), token);
        },
      ),
    );
  });

  it("refuses a tab or any other separator between the scheme and the token", () => {
    fc.assert(
      fc.property(
        fc.tuple(
          fc.string({ unit: fc.constantFrom(" ", "\t"), maxLength: 2 }),
          fc.string({
            unit: fc.constantFrom("\t", ",", ":", ";", "=", "\u00a0", "\n"),
            minLength: 1,
            maxLength: 2,
          }),
        ),
        token68,
        ([spaces, separator], token) => {
          const gap = spaces + separator;
          assert.equal(bearerToken(`Bearer${gap}${token}`), undefined, JSON.stringify(gap));
        },
      ),
    );
    assert.equal(bearerToken("Bearer\tdev-key-123"), undefined);
    assert.equal(bearerToken("Bearer \tdev-key-123"), undefined);
  });

  it("gives a token only when it is a token68, and then exactly the text after the spaces", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        const token = bearerToken(`Bearer ${text}`);
        const trimmed = text.replace(/^ +/, "").replace(/[ \t]+$/, "");
        assert.equal(token, isToken68(trimmed) ? trimmed : undefined, JSON.stringify(text));
      }),
    );
    for (const refused of ["Bearer a b", "Bearer a=b", "Bearer ==", "Bearer ключ", "Bearer a,", "Bearer"]) {
      assert.equal(bearerToken(refused), undefined, refused);
    }
  });

  it("never throws and never reads a token out of another scheme or arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (value) => {
        const token = bearerToken(value);
        if (token !== undefined) {
          assert.ok(/^[ \t]*bearer +/i.test(value), value);
          assert.ok(isToken68(token));
        }
      }),
    );
  });

  describe("the mock and the proxy read the same header the same way", () => {
    let mock: MockProcess;
    before(async () => {
      mock = await startMockProcess(["--quiet"]);
    });
    after(() => mock.stop());

    it("no answer of the mock to any of these Authorization forms is a violation for the proxy", async () => {
      const proxy = await runProxy({ upstream: mock.url, port: 0, env: {} });
      const forms = [
        "Bearer dev-key-123",
        "bearer   dev-key-123",
        "Bearer\tdev-key-123",
        "Bearer \tdev-key-123",
        "Bearer dev-key-123 extra",
        "Bearer dev-key-123,",
        "Bearer ",
        "Basic ZGV2LWtleS0xMjM=",
        "Bearer wrong-key==",
      ];
      const statuses: number[] = [];
      try {
        for (const authorization of forms) {
          const response = await fetch(`${proxy.url}/store/orders`, { headers: { authorization } });
          await response.arrayBuffer();
          statuses.push(response.status);
        }
      } finally {
        const report = await proxy.close();
        const failed = report.scenarios.flatMap((scenario) =>
          scenario.checks.filter((check) => check.status === "failed").map((check) => check.message),
        );
        assert.deepEqual(failed, [], `statuses ${statuses.join(", ")}`);
      }
      assert.deepEqual(statuses, [200, 200, 401, 401, 401, 401, 401, 401, 401]);
    });
  });
});
