import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { liveLinesWritten, startSourceProxy } from "../../test-support/proxy-process.ts";
import { type ScriptedUpstream, startScriptedUpstream } from "./scripted-upstream.ts";

// Credentials a client sends in request bodies of every shape `fetch` and API clients send, and a token an
// upstream echoes as HTML references: a real proxy process with --har and reports, every text it wrote.

const folder = tempFolder("conformance-proxy-body-secrets-");

/**
 * An upstream that answers 401 as HTML (a Content-Type no client expects: the failed check quotes the body
 * as evidence, on the live line too), its body the request body as received and the bearer token spelled
 * with HTML references: named, zero-padded, and without `;`.
 */
function startEchoingUpstream(): Promise<ScriptedUpstream> {
  const named: Record<string, string> = { ".": "&period;", _: "&lowbar;", ":": "&colon;", "/": "&sol;" };
  return startScriptedUpstream((received) => {
    const at = received.rawHeaders.findIndex((name) => name.toLowerCase() === "authorization");
    const token = (received.rawHeaders[at + 1] ?? "").replace(/^Bearer /, "");
    const spelled = (spell: (character: string) => string) =>
      [...token].map((character) => (/[A-Za-z0-9]/.test(character) ? character : spell(character))).join("");
    const references = [
      spelled((character) => named[character] ?? character),
      spelled((character) => `&#00${character.charCodeAt(0)};`),
      spelled((character) => `&#${character.charCodeAt(0)}`),
    ];
    return {
      status: 401,
      headers: [["Content-Type", "text/html"]],
      body: `<p>${references.join(" ")}</p><pre>${received.body.toString()}</pre>`,
    };
  });
}

/** Each value's core: a run of letters and digits every spelling of the value holds. */
const SECRETS = {
  multipart: "pw-Mp7Qx19Zr-1",
  textPlain: "pw-Tp4Kd82Wn-2",
  array: "pw-Ar3Jh55Lc-3",
  passcode: "pw-Pc9Vb14Ng-4",
  assertion: "eyJ-As6Fg31Hy-5",
  ndjson: "pw-Nd2Rt67Ue-6",
  graphql: "pw-Gq8Yo43Ip-7",
  xml: "pw-Xm1Sa90Dk-8",
};
const TOKEN = "sk_live.Ab9_Zq:x/Hx3Kpw7";

/** The requests, as fetch sends them: FormData as multipart, a string as text/plain, and others. */
async function sendAll(base: string): Promise<void> {
  const form = new FormData();
  form.append("username", "alice");
  form.append("password", SECRETS.multipart);
  const headers = { authorization: `Bearer ${TOKEN}` };
  const json = { ...headers, "content-type": "application/json" };
  const bodies: Array<[Record<string, string>, BodyInit]> = [
    [headers, form],
    [headers, JSON.stringify({ password: SECRETS.textPlain })],
    [
      json,
      JSON.stringify({
        password: [SECRETS.array],
        passcode: SECRETS.passcode,
        client_assertion: SECRETS.assertion,
      }),
    ],
    [
      { ...headers, "content-type": "application/x-ndjson" },
      `{"id":1}\n${JSON.stringify({ password: SECRETS.ndjson })}\n`,
    ],
    [
      json,
      JSON.stringify({ query: `mutation { login(user: "ann", password: "${SECRETS.graphql}") { ok } }` }),
    ],
    [
      { ...headers, "content-type": "application/xml" },
      `<login><user>ann</user><password>${SECRETS.xml}</password></login>`,
    ],
  ];
  for (const [sent, body] of bodies) {
    const answer = await fetch(`${base}/store/orders/5`, { method: "DELETE", headers: sent, body });
    await answer.arrayBuffer();
    assert.equal(answer.status, 401);
  }
}

describe("the proxy hides credentials of request bodies of every shape, and echoes as HTML references", () => {
  let upstream: ScriptedUpstream;
  before(async () => {
    upstream = await startEchoingUpstream();
  });
  after(() => upstream.close());

  it("nothing of them in the HAR, the live lines, stderr or any report", async () => {
    const har = join(folder, "bodies.har");
    const reports = Object.fromEntries(
      ["json", "junit", "pretty"].map((kind) => [kind, join(folder, `bodies.${kind}`)]),
    );
    const proxy = await startSourceProxy([
      "--upstream",
      upstream.url,
      "--har",
      har,
      ...Object.entries(reports).flatMap(([kind, file]) => ["--reporter", `${kind}:${file}`]),
    ]);
    await sendAll(proxy.url);
    await liveLinesWritten(proxy, 6);
    const stopped = await proxy.stop("SIGTERM");
    const written = readFileSync(har, "utf8");
    const outputs: Array<[string, string]> = [
      ["HAR", written],
      ["live lines", stopped.stdout],
      ["stderr", stopped.stderr],
      ...Object.entries(reports).map(([kind, file]): [string, string] => [kind, readFileSync(file, "utf8")]),
    ];
    const deletes = upstream.received.filter((received) => received.method === "DELETE");
    assert.equal(deletes.length, 6, "every request reached the upstream");
    assert.match(stopped.stdout, /\*\*\*/, "the echoes are in the lines, hidden");
    const cores = [...Object.values(SECRETS).map((secret) => secret.split("-")[1] ?? ""), "Hx3Kpw7"];
    for (const core of cores)
      for (const [where, text] of outputs)
        assert.ok(
          !text.includes(core),
          `${core} is in the ${where}: …${text.slice(text.indexOf(core) - 120, text.indexOf(core) + 60)}…`,
        );
    const posted = JSON.parse(written).log.entries.map(
      (entry: { request: { postData?: { text: string } } }) => entry.request.postData?.text ?? "",
    );
    assert.match(posted[2], /"passcode":"\*\*\*"/, "the HAR's copy masks the member by its name");
  });
});
