import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { tempFolder } from "../../common/temp-folder.ts";
import { brokenPiece, piecesAround } from "../../test-support/broken-encodings.ts";
import { type ProxyProcess, startSourceProxy } from "../../test-support/proxy-process.ts";
import { BASIC_PROBE_USER } from "../target/credentials.ts";
import { type ReceivedRequest, type ScriptedUpstream, startScriptedUpstream } from "./scripted-upstream.ts";

// Credentials the proxy sees only in a request's form body or in a broken percent-encoding, echoed by an
// upstream that reads them as servers do: a real proxy process without --har, its live lines and reports.

const folder = tempFolder("conformance-proxy-form-secrets-");
const REPORTS = ["json", "junit", "html"] as const;

/** A value's bytes with each `%XX` made the byte it names, as WHATWG's decoder and PHP's read them. */
function percentBytes(text: string): Buffer {
  const source = Buffer.from(text.replaceAll("+", " "));
  const bytes: number[] = [];
  for (let at = 0; at < source.length; at++) {
    const escaped = /^%[0-9a-f]{2}$/i.test(source.toString("latin1", at, at + 3));
    bytes.push(
      escaped ? Number.parseInt(source.toString("latin1", at + 1, at + 3), 16) : (source[at] as number),
    );
    if (escaped) at += 2;
  }
  return Buffer.from(bytes);
}

/** The names the test sends credentials under: each one the proxy's credential rule reads as such. */
const CREDENTIAL_NAMES = ["token", "access_token", "client_secret", "password", "api_key", "private_token"];

/** Each credential pair of a query or a form as servers read its value: as sent, by URLSearchParams, as Latin-1. */
function readingsOf(pairs: string): string[] {
  const found: string[] = [];
  for (const [name, value] of new URLSearchParams(pairs)) {
    if (!CREDENTIAL_NAMES.includes(name)) continue;
    const sent =
      pairs
        .split("&")
        .find((pair) => pair.startsWith(`${name}=`))
        ?.slice(name.length + 1) ?? "";
    found.push(value, sent, percentBytes(sent).toString("latin1"));
  }
  return found;
}

/** The credential values a request carried in its query and form body, in the readings a server may echo. */
function echoedBy(received: ReceivedRequest): string[] {
  const query = received.url.split("?")[1] ?? "";
  const type = received.rawHeaders.find(
    (_, at) => received.rawHeaders[at - 1]?.toLowerCase() === "content-type",
  );
  const form = type?.startsWith("application/x-www-form-urlencoded") ? received.body.toString("latin1") : "";
  const json = type?.startsWith("application/json") ? jsonCredentials(received.body.toString()) : [];
  return [...readingsOf(query), ...readingsOf(form), ...json];
}

/** The values of a JSON body's members named as credentials, at any depth, as a server reads them. */
function jsonCredentials(body: string): string[] {
  const found: string[] = [];
  JSON.parse(body, (name, value: unknown) => {
    if (CREDENTIAL_NAMES.includes(name) && (typeof value === "string" || typeof value === "number"))
      found.push(String(value));
    return value;
  });
  return found;
}

/** Each form a server may quote a value in, as it would stand inside a JSON string. */
function quotedForms(value: string): string[] {
  const base64 = Buffer.from(value).toString("base64");
  return [
    value,
    JSON.stringify(value).slice(1, -1).replaceAll("/", "\\/"),
    encodeURIComponent(value),
    base64,
    base64.replace(/=+$/, ""),
    Buffer.from(value).toString("base64url"),
    Buffer.from(`${BASIC_PROBE_USER}:${value}`).toString("base64"),
  ];
}

/**
 * An upstream that answers 401 with a Content-Type no client expects (a failed check whose message, on the
 * live line too, quotes it) and a body quoting every credential value it read, in each form: in the header
 * as UTF-8 bytes, in the body as JSON and as the raw bytes that were sent.
 */
function startEchoingUpstream(): Promise<ScriptedUpstream> {
  return startScriptedUpstream((received) => {
    const echoed = echoedBy(received);
    const header = echoed
      .flatMap(quotedForms)
      .map((form) =>
        Buffer.from(form)
          .toString("latin1")
          .replace(/[^\t\x20-\x7e\x80-\xff]|"/g, ""),
      )
      .join(" ");
    const raw = (received.url.split("?")[1] ?? "").split("&").map((pair) => percentBytes(pair));
    return {
      status: 401,
      headers: [["Content-Type", `text/plain; echo="${header}"`]],
      body: Buffer.concat([
        Buffer.from(
          JSON.stringify({ code: "unauthorized", message: echoed.flatMap(quotedForms), status: 401 }),
        ),
        ...raw,
        Buffer.from(received.body.toString("latin1"), "latin1"),
      ]),
    };
  });
}

/** A request sent as given (a GET with a body too, which fetch refuses): its status once its answer ended. */
function send(
  url: string,
  method: string,
  body?: string,
  type = "application/x-www-form-urlencoded",
): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (body !== undefined) {
      headers["content-type"] = type;
      headers["content-length"] = String(Buffer.byteLength(body));
    }
    const sent = request(url, { method, headers }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

/** Waits for the proxy's live line of its `count`th exchange (one JSON line each, on standard output). */
async function liveLines(proxy: ProxyProcess, count: number): Promise<string[]> {
  for (;;) {
    const lines = proxy
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("{"));
    if (lines.length >= count) return lines;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Every text the proxy wrote: its live lines, standard error and each report. */
function outputsOf(stopped: { stdout: string; stderr: string }, files: Record<string, string>): string[][] {
  return [
    ["live lines", stopped.stdout],
    ["stderr", stopped.stderr],
    ...Object.entries(files).map(([name, file]) => [name, readFileSync(file, "utf8")]),
  ];
}

function reportFiles(name: string): Record<string, string> {
  return Object.fromEntries(REPORTS.map((kind) => [kind, join(folder, `${name}.${kind}`)]));
}

function reporterArgs(files: Record<string, string>): string[] {
  return Object.entries(files).flatMap(([kind, file]) => ["--reporter", `${kind}:${file}`]);
}

/** Fails when any output holds `core`, a run of letters and digits every reading of a credential holds. */
function assertNowhere(outputs: string[][], core: string, what: string): void {
  for (const [where, text = ""] of outputs)
    assert.ok(
      !text.includes(core),
      `${what} is in ${where}: …${text.slice(text.indexOf(core) - 200, text.indexOf(core) + 100)}…`,
    );
}

describe("the proxy hides credentials of a form body and of broken percent-encodings, without --har", () => {
  let upstream: ScriptedUpstream;
  before(async () => {
    upstream = await startEchoingUpstream();
  });
  after(() => upstream.close());

  it("a form body's credential echoed by the upstream, on a DELETE and a GET with a form", async () => {
    const files = reportFiles("form");
    const proxy = await startSourceProxy(["--upstream", upstream.url, ...reporterArgs(files)]);
    const secrets = ["form/token+value=1", "client/secret+value=22"];
    const body = `grant_type=client_credentials&access_token=${encodeURIComponent(secrets[0] as string)}&client_secret=${encodeURIComponent(secrets[1] as string)}`;
    assert.equal(await send(`${proxy.url}/store/orders/5`, "DELETE", body), 401);
    assert.equal(await send(`${proxy.url}/store/orders`, "GET", body), 401);
    const lines = await liveLines(proxy, 2);
    const stopped = await proxy.stop("SIGTERM");
    assert.deepEqual(
      upstream.received.slice(-2).map((received) => received.body.toString()),
      [body, body],
      "the upstream got the form as sent",
    );
    for (const line of lines) {
      assert.match(
        line,
        /"path":"\/v1\/store\/orders/,
        "the exchange's texts are shown, its credentials hidden",
      );
      assert.match(line, /echo=\\"\*\*\*/, "the echo is in the line, hidden");
    }
    const outputs = outputsOf(stopped, files);
    for (const secret of secrets)
      for (const form of quotedForms(secret)) assertNowhere(outputs, form, JSON.stringify(form));
  });

  it("with --har, the HAR hides the form's credentials by the same one reading", async () => {
    const har = join(folder, "form.har");
    const proxy = await startSourceProxy(["--upstream", upstream.url, "--har", har]);
    const secret = "har/form+token=4444";
    const body = `access_token=${encodeURIComponent(secret)}&theme=dark`;
    assert.equal(await send(`${proxy.url}/store/orders/5`, "DELETE", body), 401);
    await liveLines(proxy, 1);
    const stopped = await proxy.stop("SIGTERM");
    const written = readFileSync(har, "utf8");
    const entry = JSON.parse(written).log.entries[0];
    assert.equal(entry.request.postData.text, "access_token=***&theme=dark");
    assert.match(entry.response.content.text, /\*\*\*/, "the echo is in the HAR, hidden");
    const outputs = [["HAR", written], ...outputsOf(stopped, {})];
    for (const form of quotedForms(secret)) assertNowhere(outputs, form, JSON.stringify(form));
  });

  it("a JSON body's credential members echoed by the upstream, and in the HAR", async () => {
    const files = reportFiles("json");
    const har = join(folder, "json.har");
    const proxy = await startSourceProxy(["--upstream", upstream.url, "--har", har, ...reporterArgs(files)]);
    const secrets = ["json/password+value=5", "refresh/Token-0123456789", "2718281828"];
    const body = JSON.stringify({
      grant_type: "password",
      password: secrets[0],
      nested: { access_token: secrets[1], pin: 1234, private_token: Number(secrets[2]) },
    });
    assert.equal(await send(`${proxy.url}/store/orders/5`, "DELETE", body, "application/json"), 401);
    assert.equal(
      await send(`${proxy.url}/store/orders`, "GET", body, "application/json; charset=utf-8"),
      401,
    );
    const lines = await liveLines(proxy, 2);
    const stopped = await proxy.stop("SIGTERM");
    for (const line of lines) assert.match(line, /echo=\\"\*\*\*/, "the echo is in the line, hidden");
    const outputs = [["HAR", readFileSync(har, "utf8")], ...outputsOf(stopped, files)];
    for (const secret of secrets)
      for (const form of quotedForms(secret)) assertNowhere(outputs, form, JSON.stringify(form));
  });

  it("generated JSON bodies: every credential member's value hidden wherever the upstream echoes it", {
    timeout: 120_000,
  }, async () => {
    const files = reportFiles("json-generated");
    const proxy = await startSourceProxy(["--upstream", upstream.url, ...reporterArgs(files)]);
    const cores: string[] = [];
    try {
      await fc.assert(
        fc.asyncProperty(jsonCredential, async ({ body, core }) => {
          cores.push(core);
          assert.equal(await send(`${proxy.url}/store/orders/9`, "DELETE", body, "application/json"), 401);
          const lines = await liveLines(proxy, cores.length);
          assertNowhere([["its live line", lines[cores.length - 1] ?? ""]], core, JSON.stringify(core));
        }),
        { numRuns: 25 },
      );
    } finally {
      const stopped = await proxy.stop("SIGTERM");
      const outputs = outputsOf(stopped, files);
      for (const core of cores) assertNowhere(outputs, core, JSON.stringify(core));
    }
  });

  it("a form body past what the proxy reads: the exchange's texts hidden whole, and said so", async () => {
    const files = reportFiles("large-form");
    const proxy = await startSourceProxy(["--upstream", upstream.url, ...reporterArgs(files)]);
    const secret = "late/form+token=333";
    const body = `note=${"n".repeat(70 * 1024)}&access_token=${encodeURIComponent(secret)}`;
    assert.equal(await send(`${proxy.url}/store/orders/5`, "DELETE", body), 401);
    const [line = ""] = await liveLines(proxy, 1);
    const stopped = await proxy.stop("SIGTERM");
    assert.match(
      line,
      /hidden whole: the request's credentials could not all be read: its form body is larger/,
    );
    const outputs = outputsOf(stopped, files);
    for (const form of quotedForms(secret)) assertNowhere(outputs, form, JSON.stringify(form));
  });

  it("generated credentials with broken percent-encodings, in a query or a form, in any reading", {
    timeout: 120_000,
  }, async () => {
    const files = reportFiles("broken");
    const proxy = await startSourceProxy(["--upstream", upstream.url, ...reporterArgs(files)]);
    const cores: string[] = [];
    try {
      await fc.assert(
        fc.asyncProperty(brokenCredential, async ({ name, value, core, carrier }) => {
          cores.push(core);
          const pair = `${name}=${value}`;
          const status =
            carrier === "query"
              ? await send(`${proxy.url}/store/orders?${pair}`, "GET")
              : carrier === "form"
                ? await send(`${proxy.url}/store/orders/7`, "DELETE", `a=1&${pair}`)
                : await send(`${proxy.url}/store/orders`, "GET", `a=1&${pair}`);
          assert.equal(status, 401);
          const lines = await liveLines(proxy, cores.length);
          const line = lines[cores.length - 1] ?? "";
          assert.match(line, /echo=\\"\*\*\*/, `the echo is in the line, hidden: ${line}`);
          assertNowhere([["its live line", line]], core, `${JSON.stringify(value)} (read leniently)`);
        }),
        {
          numRuns: 40,
          examples: [
            [{ name: "token", value: "+.A00Aaa0a0AA.%ED%A0%80", core: "A00Aaa0a0AA", carrier: "query" }],
            [{ name: "token", value: "s%E9cretCore01%zz", core: "cretCore01", carrier: "query" }],
            [{ name: "access_token", value: "%C0%AFcoreTwo02%", core: "coreTwo02", carrier: "form" }],
            [{ name: "api_key", value: "caf%C3%A9coreThree3%C3", core: "coreThree3", carrier: "query" }],
            [
              {
                name: "password",
                value: "coreFour04%F0%9F%98+x%ED%A0%80",
                core: "coreFour04",
                carrier: "list-form",
              },
            ],
          ],
        },
      );
    } finally {
      const stopped = await proxy.stop("SIGTERM");
      const outputs = outputsOf(stopped, files);
      for (const core of cores) assertNowhere(outputs, core, JSON.stringify(core));
    }
  });
});

/**
 * A JSON body with a credential member at some depth, its value a run of letters and digits (its core,
 * which every form of it holds) between other characters, beside members that hold no credential.
 */
const jsonCredential = fc
  .record({
    name: fc.constantFrom(...CREDENTIAL_NAMES),
    core: fc.stringMatching(/^[A-Za-z0-9]{10,16}$/),
    // Characters JSON writes as themselves: the upstream quotes each form inside JSON again, and a form
    // escaped twice over is an encoding nested further than any promise.
    before: fc.stringMatching(/^[A-Za-z0-9 +=.~_-]{0,6}$/),
    after: fc.stringMatching(/^[A-Za-z0-9 +=.~_-]{0,6}$/),
    depth: fc.nat(3),
    other: fc.dictionary(fc.constantFrom("id", "note", "scope", "user"), fc.string({ maxLength: 12 })),
  })
  .map(({ name, core, before, after, depth, other }) => {
    let value: unknown = { ...other, [name]: `${before}${core}${after}` };
    for (let level = 0; level < depth; level++) value = level % 2 === 0 ? { data: value } : [value, 1];
    return { body: JSON.stringify(value), core };
  });

const pieces = brokenPiece(true);

/**
 * A credential with at least one broken percent-encoding around a run of letters and digits (its core,
 * which every reading of it holds), under a name the credential rule reads, sent in a query, a DELETE's
 * form body or a list request's form body.
 */
const brokenCredential = fc
  .record({
    name: fc.constantFrom(...CREDENTIAL_NAMES),
    core: fc.stringMatching(/^[A-Za-z0-9]{10,16}$/),
    before: piecesAround(pieces),
    broken: pieces,
    after: piecesAround(pieces),
    carrier: fc.constantFrom("query", "form", "list-form"),
  })
  .map(({ name, core, before, broken, after, carrier }) => ({
    name,
    // A piece that glues onto the core (a lone `%` before hex digits) changes it: the core is what stays.
    value: `${before.join("")}${broken}.${core}.${after.join("")}`,
    core,
    carrier,
  }));
