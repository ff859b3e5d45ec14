import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { forwardedResponseHeaders, requestHeaderFilter } from "../proxy/forward-headers.ts";

const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

/** RFC 9110 §7.6.1 as plainly as it reads: every header but the hop-by-hop ones, those Connection names, and `drop`. */
function reference(raw: readonly string[], drop: readonly string[]): string[] {
  const named = new Set<string>();
  for (let index = 0; index < raw.length; index += 2)
    if ((raw[index] as string).toLowerCase() === "connection")
      for (const token of (raw[index + 1] as string).split(",")) named.add(token.trim().toLowerCase());
  const kept: string[] = [];
  for (let index = 0; index < raw.length; index += 2) {
    const lower = (raw[index] as string).toLowerCase();
    if (HOP_BY_HOP.includes(lower) || drop.includes(lower) || named.has(lower)) continue;
    kept.push(raw[index] as string, raw[index + 1] as string);
  }
  return kept;
}

/** A name in any spelling: the hop-by-hop ones, Host, an added one, and others of the same lengths. */
const name = fc
  .oneof(
    fc.constantFrom(
      ...HOP_BY_HOP,
      "host",
      "x-gateway-key",
      "close",
      "x-other",
      "content-type",
      "tf",
      "cookie",
    ),
    fc.stringMatching(/^[a-z-]{1,12}$/),
  )
  .chain((lower) =>
    fc
      .array(fc.boolean(), { minLength: lower.length, maxLength: lower.length })
      .map((upper) => [...lower].map((letter, at) => (upper[at] ? letter.toUpperCase() : letter)).join("")),
  );
const value = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc
    .array(fc.oneof(name, fc.constantFrom("keep-alive", "close", " Upgrade ", "")), { maxLength: 4 })
    .map((tokens) => tokens.join(",")),
);
const rawHeaders = fc.array(fc.tuple(name, value), { maxLength: 12 }).map((pairs) => pairs.flat());

describe("forward-headers", () => {
  it("passes on to the client every header of the upstream's but the hop-by-hop ones and those Connection names", () => {
    fc.assert(
      fc.property(rawHeaders, (raw) => {
        assert.deepEqual(forwardedResponseHeaders(raw), reference(raw, []));
      }),
      { numRuns: 3000 },
    );
  });

  it("passes on the client's headers with Host naming the upstream first and the proxy's own headers last", () => {
    const filter = requestHeaderFilter("api.example.test", [["X-Gateway-Key", "secret"]]);
    fc.assert(
      fc.property(rawHeaders, (raw) => {
        const expected = ["Host", "api.example.test", ...reference(raw, ["host", "x-gateway-key"])];
        assert.deepEqual(filter(raw), [...expected, "X-Gateway-Key", "secret"]);
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps repeated headers in their order and spelling", () => {
    const raw = ["Connection", "keep-alive, X-Hop", "x-hop", "1", "Set-Cookie", "a=1", "set-cookie", "b=2"];
    assert.deepEqual(forwardedResponseHeaders(raw), ["Set-Cookie", "a=1", "set-cookie", "b=2"]);
  });
});
