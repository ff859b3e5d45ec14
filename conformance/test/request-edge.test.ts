import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { describe, it } from "node:test";
import fc from "fast-check";
import { allowedHosts } from "../../common/allowed-hosts.ts";
import { PROXY_OPTION_NAMES } from "../judging/setting-names.ts";
import { checkRequest, type EdgeSettings } from "../proxy/request-edge.ts";

const settings: EdgeSettings = {
  hosts: allowedHosts("127.0.0.1"),
  upstream: new URL("https://api.example.test/v1"),
  names: PROXY_OPTION_NAMES,
};
const lending: EdgeSettings = { ...settings, credentialOrigins: new Set(["http://app.test"]) };

/** A request head as Node's parser hands it over: any text it lets through in the target and headers. */
function head(target: string, headers: Record<string, string | undefined>): IncomingMessage {
  const defined = Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined));
  return { method: "GET", url: target, headers: defined } as unknown as IncomingMessage;
}

const text = fc.string({ unit: "binary", maxLength: 40 });
const hostLike = fc.oneof(
  text,
  fc
    .tuple(fc.constantFrom("localhost", "127.0.0.1", "[::1]", "[zz", "evil.test"), fc.integer())
    .map(([name, port]) => `${name}:${port}`),
);
// Mostly Hosts of names the proxy may answer to, with ports in and out of range, for repeats to be likely.
const someHost = fc.oneof(
  hostLike,
  fc
    .tuple(fc.constantFrom("localhost", "127.0.0.1", "[::1]", "evil.test"), fc.integer({ min: 0, max: 3 }))
    .map(([name, port]) => (port === 0 ? name : `${name}:${[0, 4020, 65536][port - 1]}`)),
);
const targetLike = fc.oneof(
  text,
  text.map((rest) => `/${rest}`),
  text.map((rest) => `http://${rest}`),
  fc.constantFrom("*", "http://[zz/", "ws://127.0.0.1/v1", "https://api.example.test/v1/store/orders?x=1"),
);

describe("the proxy's edge (checkRequest)", () => {
  it("never throws, and what it lets through is a path whose URL is whole", () => {
    fc.assert(
      fc.property(hostLike, targetLike, fc.option(text, { nil: undefined }), (host, target, origin) => {
        for (const edge of [settings, lending]) {
          const verdict = checkRequest(head(target, { host, origin }), edge);
          if (!verdict.ok) {
            assert.ok(verdict.status === 400 || verdict.status === 403);
            continue;
          }
          assert.ok(verdict.request.target.startsWith("/"), verdict.request.target);
          assert.equal(verdict.request.url.host.length > 0, true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("ports past 65535, other schemes, other hosts and * are refused; the upstream's own URL is a path", () => {
    const verdict = (target: string, host = "127.0.0.1:4020") =>
      checkRequest(head(target, { host }), settings);
    for (const host of ["localhost:99999", "127.0.0.1:65536", "127.0.0.1:0", "127.0.0.1:", ""])
      assert.equal(verdict("/v1/store/orders", host).ok, false, host);
    for (const target of [
      "*",
      "http://[zz/",
      "ws://127.0.0.1/v1",
      "ftp://127.0.0.1/",
      "x://y/",
      "http://evil/",
    ])
      assert.deepEqual(verdict(target).ok, false, target);
    const absolute = verdict("https://api.example.test/v1/store/orders?x=1");
    assert.ok(absolute.ok && absolute.request.target === "/v1/store/orders?x=1");
  });

  it("when the proxy lends credentials, only its own page and the named origins may use them", () => {
    const from = (headers: Record<string, string>) =>
      checkRequest(head("/v1/store/orders", { host: "127.0.0.1:4020", ...headers }), lending).ok;
    assert.equal(from({ origin: "http://app.test" }), true);
    assert.equal(from({ origin: "http://127.0.0.1:4020" }), true);
    assert.equal(from({}), true);
    assert.equal(from({ "sec-fetch-site": "same-origin" }), true);
    assert.equal(from({ "sec-fetch-site": "none" }), true);
    assert.equal(from({ origin: "http://evil.test" }), false);
    assert.equal(from({ origin: "null" }), false);
    assert.equal(from({ "sec-fetch-site": "cross-site" }), false);
    assert.equal(from({ "sec-fetch-site": "same-site" }), false);
    // Without credentials of its own the proxy passes every origin on, as a plain proxy does.
    assert.equal(
      checkRequest(head("/v1/store/orders", { host: "127.0.0.1:4020", origin: "http://evil.test" }), settings)
        .ok,
      true,
    );
  });

  it("a Host accepted once is remembered as its text only: the next request's Host is checked again", () => {
    const edge: EdgeSettings = { ...settings };
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            someHost,
            text.map((rest) => `/${rest}`),
          ),
          { maxLength: 6 },
        ),
        (requests) => {
          for (const [host, target] of requests) {
            const verdict = checkRequest(head(target, { host }), edge);
            const fresh = checkRequest(head(target, { host }), { ...settings });
            assert.deepEqual(verdict.ok, fresh.ok, host);
            if (!verdict.ok || !fresh.ok) continue;
            assert.equal(verdict.request.target, target);
            // The URL, made when the HAR reads it, is the one the client's Host and target name.
            assert.equal(verdict.request.url.href, new URL(`http://${host}${target}`).href);
          }
        },
      ),
      { numRuns: 1000 },
    );
    assert.equal(checkRequest(head("/v1/store/orders", { host: "localhost:4020" }), edge).ok, true);
    assert.equal(checkRequest(head("/v1/store/orders", { host: "evil.test:4020" }), edge).ok, false);
    assert.equal(checkRequest(head("/v1/store/orders", { host: "[zz:4020" }), edge).ok, false);
  });

  it("a Host the URL parser refuses is a bad host, even when its name looks allowed", () => {
    const anyAddress: EdgeSettings = { ...settings, hosts: allowedHosts("0.0.0.0") };
    for (const host of ["[::1:::]:4020", "[1.2.3]:4020", "127.0.0.1%zz:4020"]) {
      const verdict = checkRequest(head("/v1/store/orders", { host }), anyAddress);
      assert.ok(!verdict.ok && verdict.status === 400 && verdict.code === "bad_host", host);
    }
  });
});
