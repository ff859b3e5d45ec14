import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ProxyProcess, startProxyProcess } from "../../test-support/proxy-process.ts";
import { BASIC_PROBE_USER } from "../target/credentials.ts";
import { NO_PROXY_ENV } from "./run-cli.ts";
import { type ReceivedRequest, startScriptedUpstream } from "./scripted-upstream.ts";

const BIN = fileURLToPath(new URL("../bin.ts", import.meta.url));
const folder = tempFolder("conformance-proxy-secrets-");

function startProxy(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ProxyProcess> {
  return startProxyProcess(process.execPath, ["--import", "tsx", BIN, "proxy", "--port", "0", ...args], {
    env: { ...process.env, NO_COLOR: "", ...NO_PROXY_ENV, ...env },
  });
}

// Each with the characters encoders change: / + =.
const FIRST_BEARER = "first/bearer+token=1";
const LAST_BEARER = "last/bearer+token=22";
const FIRST_KEY = "first/api+key=333";
const SECOND_KEY = "second/api+key=4444";
const QUERY_TOKEN = "query/token+value=5";
const GATEWAY_KEY = "gateway/key+value=6";
const SECRETS = [FIRST_BEARER, LAST_BEARER, FIRST_KEY, SECOND_KEY, QUERY_TOKEN, GATEWAY_KEY];

/** Each form an upstream may echo a secret in, as it would stand inside a JSON string. */
function echoedForms(secret: string): string[] {
  const base64 = Buffer.from(secret).toString("base64");
  return [
    secret,
    secret.replaceAll("/", "\\/"),
    encodeURIComponent(secret),
    encodeURIComponent(secret).toLowerCase(),
    base64,
    base64.replace(/=+$/, ""),
    Buffer.from(secret).toString("base64url"),
    Buffer.from(`${BASIC_PROBE_USER}:${secret}`).toString("base64"),
    secret.toUpperCase(),
    Buffer.from(`client:${secret}`).toString("base64"),
  ];
}

/** Basic credentials of a user not the suite's: the characters that depend on the secret alone. */
function basicMiddle(secret: string): string {
  return Buffer.from(`client:${secret}`).toString("base64").slice(10, -4);
}

/** What a header name can carry of a secret: its percent-encoding is an HTTP token. */
function asHeaderName(secret: string): string {
  return `x-echo-${encodeURIComponent(secret)}`;
}

/** The credentials a request carried, as the upstream saw them (the gateway's added by the proxy). */
function credentialsIn(received: ReceivedRequest): string[] {
  const found: string[] = [];
  for (let at = 0; at < received.rawHeaders.length; at += 2) {
    const name = received.rawHeaders[at]?.toLowerCase();
    const value = received.rawHeaders[at + 1] ?? "";
    if (name === "authorization") found.push(value.replace(/^Bearer /, ""));
    if (name === "x-api-key" || name === "x-gateway-key") found.push(value);
  }
  const token = new URL(received.url, "http://upstream").searchParams.get("token");
  if (token !== null) found.push(token);
  return found;
}

/** A request with headers repeated, as fetch cannot send them: two Authorization, two X-Api-Key. */
function sendWithRepeatedHeaders(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = request(
      `${url}/store/orders?token=${encodeURIComponent(QUERY_TOKEN)}`,
      {
        // Raw pairs, sent as given: no Host is added to them.
        headers: [
          ["Host", new URL(url).host],
          ["Authorization", `Bearer ${FIRST_BEARER}`],
          ["Authorization", `Bearer ${LAST_BEARER}`],
          ["X-Api-Key", FIRST_KEY],
          ["X-Api-Key", SECOND_KEY],
        ].flat(),
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      },
    );
    sent.on("error", reject);
    sent.end();
  });
}

/** Every string a text holds as JSON would show it, unescaped, beside the text itself. */
function readings(text: string): string[] {
  return [text, text.replaceAll("\\\\", "\\")];
}

describe("the proxy hides every credential an upstream echoes", () => {
  it("in each form, from repeated headers, in the HAR, every report and the live lines", async () => {
    const upstream = await startScriptedUpstream((received) => {
      const credentials = credentialsIn(received);
      const echo = credentials.flatMap(echoedForms).join(" ");
      return {
        status: 401,
        statusText: `Bad token ${echo}`,
        // A Content-Type that is not JSON: a failed check whose message quotes it, on the live line too,
        // and whose evidence shows the body.
        headers: [
          ["Content-Type", `text/plain; echo="${echo.replaceAll("\\", "")}"`],
          ...credentials.map((secret): [string, string] => [asHeaderName(secret), "1"]),
        ],
        body: `{"code":"unauthorized ${echo}","message":"${echo}","status":400}`,
      };
    });
    const files = Object.fromEntries(
      ["json", "junit", "html", "markdown", "pretty"].map((name) => [name, join(folder, `echo.${name}`)]),
    );
    const har = join(folder, "echo.har");
    try {
      const proxy = await startProxy(
        [
          "--upstream",
          upstream.url,
          ...Object.entries(files).flatMap(([name, file]) => ["--reporter", `${name}:${file}`]),
          "--har",
          har,
          "--header-from-env",
          "X-Gateway-Key=GATEWAY_KEY",
        ],
        { GATEWAY_KEY },
      );
      assert.equal(await sendWithRepeatedHeaders(proxy.url), 401);
      const { stdout, stderr } = await proxy.stop("SIGTERM");
      const sent = upstream.received.at(-1);
      assert.deepEqual(
        credentialsIn(sent as ReceivedRequest).sort(),
        [...SECRETS].sort(),
        "the upstream saw every credential, the repeated ones too",
      );
      const report = readFileSync(files.json as string, "utf8");
      assert.match(report, /"status": "failed"/);
      assert.match(report, /\*\*\* \*\*\*/, "the echo is in the report, hidden");
      assert.match(
        stdout,
        /"failed":\[\{"id":"listOrders.content-type","message":"[^\n]*echo=\\"\*\*\* \*\*\*/,
      );
      const outputs: Array<[string, string]> = [
        ["live lines", stdout],
        ["stderr", stderr],
        ["HAR", readFileSync(har, "utf8")],
        ...Object.entries(files).map(([name, file]): [string, string] => [name, readFileSync(file, "utf8")]),
      ];
      for (const [where, text] of outputs)
        for (const reading of readings(text))
          for (const secret of SECRETS)
            for (const form of [...echoedForms(secret), basicMiddle(secret), asHeaderName(secret)])
              assert.ok(
                !reading.includes(form),
                `${JSON.stringify(form)} (of ${secret}) is in ${where}: …${reading.slice(reading.indexOf(form) - 200, reading.indexOf(form) + 100)}…`,
              );
    } finally {
      await upstream.close();
    }
  });

  it("in each exchange, its own credentials when they change from one exchange to the next", async () => {
    const upstream = await startScriptedUpstream((received) => ({
      status: 401,
      // A Content-Type that is not JSON: the failed check's message, on the live line, quotes it.
      headers: [["Content-Type", `text/plain; echo="${credentialsIn(received).join(" ")}"`]],
      body: `{"code":"unauthorized","message":"no","status":401}`,
    }));
    const tokens = ["token/of+client=A", "token/of+client=B", "token/of+client=A", "token/of+client=C"];
    try {
      const proxy = await startProxy(["--upstream", upstream.url]);
      for (const token of tokens) {
        const answer = await fetch(`${proxy.url}/store/orders`, {
          headers: { authorization: `Bearer ${token}` },
        });
        await answer.arrayBuffer();
      }
      const { stdout } = await proxy.stop("SIGTERM");
      const lines = stdout.split("\n").filter((line) => line.startsWith("{"));
      assert.equal(lines.length, tokens.length, stdout);
      for (const [at, line] of lines.entries()) {
        assert.match(line, /echo=\\"\*\*\*\\"/, "the echo is in the line, hidden");
        for (const token of tokens)
          for (const form of echoedForms(token))
            assert.ok(!line.includes(form), `${JSON.stringify(form)} is in line ${at + 1}: ${line}`);
      }
    } finally {
      await upstream.close();
    }
  });

  it("in a UTF-16 answer and in base64 wrapped in lines, in the HAR, the reports and the live lines", async () => {
    const token = "utf16/bearer+token=7";
    // 50 bytes ahead of the token: its base64 (characters 67 to 93) is broken by the line's end at 76.
    const mime = Buffer.from(`${"m".repeat(50)}${token}${"n".repeat(40)}`).toString("base64");
    const lines = mime.match(/.{1,76}/g)?.join("\r\n") ?? "";
    const upstream = await startScriptedUpstream((received) =>
      received.url.includes("wrapped")
        ? { status: 401, headers: [["Content-Type", "text/plain"]], body: lines }
        : {
            status: 401,
            headers: [["Content-Type", "application/json; charset=utf-16"]],
            body: Buffer.concat([
              Buffer.from([0xff, 0xfe]),
              Buffer.from(
                JSON.stringify({ code: "unauthorized", message: `no ${token}`, status: 401 }),
                "utf16le",
              ),
            ]),
          },
    );
    const har = join(folder, "wide.har");
    const report = join(folder, "wide.json");
    try {
      const proxy = await startProxy([
        "--upstream",
        upstream.url,
        "--har",
        har,
        "--reporter",
        `json:${report}`,
      ]);
      for (const path of ["/store/orders", "/store/orders?wrapped=1"]) {
        const answer = await fetch(`${proxy.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
        await answer.arrayBuffer();
      }
      const { stdout } = await proxy.stop("SIGTERM");
      const wide = [...token].join("\0");
      // The characters that depend on the token alone.
      const revealing = mime.slice(67, 93);
      const entries = JSON.parse(readFileSync(har, "utf8")).log.entries;
      assert.equal(entries.length, 2);
      const texts = [
        ...stdout.split("\n").map((line) => [line]),
        ...entries.map((entry: unknown) => stringsOf(entry)),
        stringsOf(JSON.parse(readFileSync(report, "utf8"))),
      ].flat();
      assert.ok(
        texts.some((text) => text.includes("\0***")),
        "the UTF-16 echo is kept, hidden",
      );
      assert.ok(
        texts.some((text) => text.startsWith(mime.slice(0, 60)) && text.includes("***")),
        "the wrapped echo is kept, hidden",
      );
      for (const text of texts) {
        assert.ok(!text.includes(wide), `the UTF-16 token is in ${JSON.stringify(text)}`);
        const unwrapped = text.replaceAll(/\r?\n/g, "");
        assert.ok(!unwrapped.includes(revealing), `the wrapped token is in ${JSON.stringify(text)}`);
      }
    } finally {
      await upstream.close();
    }
  });
});

/** Every string in a JSON value, a base64 HAR body as its bytes read as Latin-1. */
function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value, Buffer.from(value, "base64").toString("latin1")];
  if (typeof value !== "object" || value === null) return [];
  return Object.values(value).flatMap(stringsOf);
}
