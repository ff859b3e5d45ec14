import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hiddenResponse, hiddenWhole, OWN_SECRETS_HIDDEN, TrafficSecrets } from "../proxy/traffic-secrets.ts";
import { requestSecrets } from "../target/credentials.ts";

const noProxy = {};

describe("TrafficSecrets", () => {
  it("hides in an exchange's texts its own credentials, every one of repeated headers, and the configured ones", () => {
    const secrets = new TrafficSecrets({ headers: { "X-Gateway-Key": "gateway/key=1" } }, noProxy);
    const own = requestSecrets(
      [
        "Authorization",
        "Bearer first/token",
        "Authorization",
        "Bearer last/token",
        "X-Api-Key",
        "key/one",
        "x-api-key",
        "key/two",
      ],
      "/v1/store/orders?token=query%2Ftoken",
      secrets.names,
    );
    const hide = secrets.forExchange(own);
    const echoed = ["first/token", "last\\/token", "key%2fone", Buffer.from("key/two").toString("base64url")];
    for (const form of [...echoed, "query/token", "gateway\\/key=1"])
      assert.equal(hide(`<${form}>`), "<***>", form);
  });

  it("hides one exchange's credentials in its own texts only: nothing is learned from the traffic", () => {
    const secrets = new TrafficSecrets({ headers: { "X-Gateway-Key": "gateway-key-1" } }, noProxy);
    const first = secrets.forExchange(["client-token-a"]);
    const second = secrets.forExchange(["client-token-b"]);
    assert.equal(first("client-token-a client-token-b"), "*** client-token-b");
    assert.equal(second("client-token-a client-token-b"), "client-token-a ***");
    assert.equal(secrets.hide("gateway-key-1 client-token-a"), "*** client-token-a");
  });

  it("hides the credentials of an exchange after a thousand other clients' ones", () => {
    const secrets = new TrafficSecrets({}, noProxy);
    for (let client = 0; client < 1000; client++) secrets.forExchange([`token-of-client-${client}`]);
    assert.equal(secrets.forExchange(["token-of-client-1000"])("echo token-of-client-1000"), "echo ***");
    assert.equal(secrets.forExchange(["token-of-client-0"])("echo token-of-client-0"), "echo ***");
  });

  it("hides an exchange's texts whole when its request carried more credential parts than it hides one by one", () => {
    const secrets = new TrafficSecrets({}, noProxy);
    const cookie = (parts: number, salt: string) =>
      Array.from({ length: parts }, (_, at) => `c${at}=${salt}${String(at * 7919).padStart(10, "q")}`).join(
        "; ",
      );
    const many = requestSecrets(["Cookie", cookie(1000, "w")], "/v1/store/orders", secrets.names);
    assert.ok(many.length > OWN_SECRETS_HIDDEN);
    const echo = `echo w${String(999 * 7919).padStart(10, "q")} from GET /v1/store/orders`;
    assert.match(
      secrets.forExchange(many)(echo),
      /^\*\*\* \(hidden whole: the request carried \d+ credential parts/,
    );
    const few = requestSecrets(["Cookie", cookie(40, "f")], "/v1/store/orders", secrets.names);
    assert.equal(
      secrets.forExchange(few)(`echo f${String(39 * 7919).padStart(10, "q")} from GET /v1/store/orders`),
      "echo *** from GET /v1/store/orders",
    );
  });

  it("hides an exchange's texts whole when a part of the proxy could not read all its credentials", () => {
    const secrets = new TrafficSecrets({}, noProxy);
    const whole = secrets.forExchange(["client-token-a", hiddenWhole("its form body is too large")]);
    assert.equal(whole("GET /v1/store/orders echo"), "*** (hidden whole: its form body is too large)");
    // What a client sends never stands in for it: a value spelled like it is one more secret.
    const spelled = secrets.forExchange(["\u0000hidden whole 0\u0000 client-token-b"]);
    assert.equal(spelled("GET /v1/store/orders"), "GET /v1/store/orders");
  });

  it("hides the forward proxy's user and password, as spelled in its URL and decoded", () => {
    const secrets = new TrafficSecrets(
      {},
      { proxy: new URL("http://proxy-user:pass%2Fword@127.0.0.1:3128") },
    );
    assert.equal(secrets.hide("proxy-user pass%2Fword pass/word pass\\/word"), "*** *** *** ***");
  });

  it("hides the credential of a configured Authorization without its scheme, and a shown header not at all", () => {
    const secrets = new TrafficSecrets(
      {
        headers: { Authorization: "Bearer gateway-token-7", "X-Tenant": "tenant-42" },
        showHeaders: ["x-tenant"],
      },
      noProxy,
    );
    assert.equal(secrets.hide("gateway-token-7 tenant-42"), "*** tenant-42");
    assert.deepEqual([...secrets.names], ["authorization"]);
  });

  it("hides a secret a response echoes as a header's name, and the cut-off reach of its hider", () => {
    const secrets = new TrafficSecrets({ headers: { "X-Gateway-Key": "gateway-key-1" } }, noProxy);
    const hide = secrets.forExchange(["client-token-a"]);
    const response = {
      status: 200,
      headers: { "x-echo-client-token-a": "1", "x-GATEWAY-KEY-1": "2" },
      body: "",
    };
    assert.deepEqual(Object.keys(hiddenResponse(response, hide).headers), ["x-echo-***", "x-***"]);
    assert.ok(hide.reach >= "client-token-a".length);
  });
});
