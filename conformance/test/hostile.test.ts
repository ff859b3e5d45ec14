import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { XMLValidator } from "fast-xml-parser";
import { tempFolder } from "../../common/temp-folder.ts";
import { startTarget } from "../../test-support/target-server.ts";
import { jsonLine, liveLine } from "../proxy/live-line.ts";
import { runProxy } from "../proxy/run-proxy.ts";
import { renderHtml } from "../reports/html.ts";
import { renderJson } from "../reports/json.ts";
import { renderJunit } from "../reports/junit.ts";
import { renderMarkdown } from "../reports/markdown.ts";
import { renderPretty } from "../reports/pretty.ts";
import type { Report } from "../reports/report.ts";
import { runConformance } from "../suite/runner.ts";
import { type HostileTarget, startHostileTarget } from "./hostile-target.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";

const KEY = "hostile-key-4711";
const base64 = (text: string) => Buffer.from(text).toString("base64");
/** What must never reach a terminal or a text report raw: C0 but line breaks and tabs, DEL, C1, bidi overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const NOT_XML_1_0 = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/;

describe("a hostile target's bytes are data, in every report", () => {
  let target: HostileTarget;
  let report: Report;
  before(async () => {
    target = await startHostileTarget();
    report = await runConformance({ baseUrl: target.url, apiKey: KEY, env: {} });
  });
  after(() => target.close());

  it("the pretty report and the JUnit report show control characters escaped; the JUnit report is well-formed", () => {
    assert.ok(report.summary.failed > 0);
    const pretty = renderPretty(report, { color: false });
    assert.doesNotMatch(pretty, RAW_CONTROL);
    assert.ok(pretty.includes("\\e]52;c;"), "the clipboard write is shown, escaped");
    const junit = renderJunit(report);
    assert.doesNotMatch(junit, NOT_XML_1_0);
    assert.equal(XMLValidator.validate(junit), true);
    assert.doesNotMatch(junit, RAW_CONTROL);
  });

  it("the Markdown report makes no link, image, HTML, mention or table cell of what the target sent", () => {
    const markdown = renderMarkdown(report);
    assert.doesNotMatch(markdown, RAW_CONTROL);
    assert.doesNotMatch(markdown, /!\[pixel\]\(/);
    assert.doesNotMatch(markdown, /\[Click to fix the build\]\(/);
    assert.doesNotMatch(markdown, /<img/);
    assert.doesNotMatch(markdown, /@security-team/);
    assert.doesNotMatch(markdown, /https:\/\/(attacker|phish)/);
    assert.doesNotMatch(markdown, /www\.phish/);
    // Every row of the failures table has its five cells: no pipe from the target opened another.
    const rows = markdown
      .split("\n")
      .filter((line) => line.startsWith("| ") && !line.startsWith("| Operation"));
    assert.ok(rows.length > 2);
    for (const row of rows.filter((line) => !/^\| `/.test(line)))
      assert.equal(row.replace(/\\\|/g, "").split("|").length - 2, 5, row);
  });

  it("the key never appears, nor its Basic or base64 forms, though the target echoes them", () => {
    const forms = [KEY, base64(KEY), base64(`conformance:${KEY}`)];
    const texts = {
      json: renderJson(report),
      pretty: renderPretty(report, { color: false }),
      html: renderHtml(report),
      junit: renderJunit(report),
      markdown: renderMarkdown(report),
    };
    for (const [name, text] of Object.entries(texts))
      for (const form of forms) assert.ok(!text.includes(form), `${name} holds ${form}`);
    // The echo is there, masked: the test sees what it means to.
    assert.match(texts.json, /echo: Basic \*\*\*/);
  });
});

describe("credentials in a target's URL", () => {
  it("are refused by the suite and the proxy with one line that does not print them", async () => {
    for (const args of [
      ["--base-url", "http://qa:pass-w0rd-9@127.0.0.1:9/v1", "--api-key", "k"],
      ["proxy", "--upstream", "http://qa:pass-w0rd-9@127.0.0.1:9/v1", "--port", "0"],
    ]) {
      const { code, stderr } = await cli(args, NO_PROXY_ENV);
      assert.equal(code, 2);
      assert.match(stderr, /holds credentials \(http:\/\/\*\*\*@127\.0\.0\.1:9\/v1\), which are never sent/);
      assert.ok(!stderr.includes("pass-w0rd-9"));
    }
  });

  it("in its query or fragment are refused the same way, the query never printed", async () => {
    for (const args of [
      ["--base-url", "http://127.0.0.1:9/v1?api_key=s3cret-Query-7", "--api-key", "k"],
      ["--base-url", "http://127.0.0.1:9/v1#token=s3cret-Query-7", "--api-key", "k"],
      ["proxy", "--upstream", "http://127.0.0.1:9/v1?api_key=s3cret-Query-7", "--port", "0"],
    ]) {
      const { code, stderr } = await cli(args, NO_PROXY_ENV);
      assert.equal(code, 2, stderr);
      assert.match(
        stderr,
        /has a query or fragment .*\(http:\/\/127\.0\.0\.1:9\/v1[?#]\*\*\*\), which are never sent/,
      );
      assert.ok(!stderr.includes("s3cret-Query-7"));
    }
  });
});

describe("the proxy masks every credential the traffic carries", () => {
  it("one-word Authorization, X-Api-Key, Cookie, access_token and --secret names: in lines, reports and the HAR", async () => {
    const target = await startHostileTarget();
    const folder = tempFolder("petstore-hostile-");
    const lines: string[] = [];
    const proxy = await runProxy({
      upstream: target.url,
      port: 0,
      env: {},
      har: join(folder, "traffic.har"),
      secretNames: ["X-Custom-Auth", "sessionid"],
      onExchange: (judged) => lines.push(liveLine(judged, { color: false }), jsonLine(judged)),
    });
    const secrets = [
      "token-only-5150",
      "api-key-8086",
      "cookie-6502",
      "query-token-68000",
      "custom-z80",
      "sid-1802",
    ];
    try {
      for (const [headers, query] of [
        [{ authorization: "token-only-5150" }, ""],
        [{ "x-api-key": "api-key-8086", cookie: "session=cookie-6502" }, "?access_token=query-token-68000"],
        [{ "x-custom-auth": "custom-z80" }, "?sessionid=sid-1802&limit=5"],
      ] as const) {
        const response = await fetch(`${proxy.url}/store/orders${query}`, { headers });
        await response.text();
      }
    } finally {
      const final = await proxy.close();
      await target.close();
      const texts = {
        lines: lines.join(""),
        json: renderJson(final),
        pretty: renderPretty(final, { color: false }),
        har: readFileSync(join(folder, "traffic.har"), "utf8"),
      };
      for (const [name, text] of Object.entries(texts))
        for (const secret of secrets) assert.ok(!text.includes(secret), `${name} holds ${secret}`);
      assert.match(texts.har, /"name":"x-api-key","value":"\*\*\*"/i);
      assert.match(texts.har, /access_token=\*\*\*/);
      assert.match(texts.har, /"value":"\*\*\*"[^}]*\}/);
    }
  });
});

describe("a target that switches protocols on every request", { timeout: 60_000 }, () => {
  it("fails each request with one line and the run with exit 1, not exit 0 in silence", async () => {
    // 101 to plain requests: Node hands the socket over and the request ends without an event.
    const server = createNetServer((socket) => {
      socket.on("error", () => {});
      socket.once("data", () =>
        socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n"),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const { code, stdout, stderr } = await cli(
        ["--base-url", `http://127.0.0.1:${port}/v1`, "--api-key", "key-of-101", "--deadline", "5s"],
        NO_PROXY_ENV,
      );
      assert.equal(code, 1, stderr);
      assert.match(
        stdout,
        /list-orders\.list\.status: expected 200, but no response came back: the target switched protocols \(101\) for a request that asked for no upgrade/,
      );
    } finally {
      server.close();
    }
  });
});

describe("a target that never finishes, or sends more than an answer needs", { timeout: 60_000 }, () => {
  it("a list read that hit --deadline is not read again: later readings are not judged, saying why once", async () => {
    const target = await startHostileTarget("drip");
    try {
      const lists: string[] = [];
      const report = await runConformance({
        baseUrl: target.url,
        apiKey: KEY,
        env: {},
        deadlineMs: 500,
        pendingOrderId: "1",
        shippedOrderId: "2",
        raceOrderId: "3",
        raceConcurrency: 2,
        onExchange: (exchange) => {
          // The run's own key as a bearer token is replayed as its variable; the probes (Basic, unknown) are not.
          const replayed = JSON.stringify(exchange.request.replay?.headers ?? []);
          if (
            exchange.request.method === "GET" &&
            replayed.includes('{"variable":"PETSTORE_API_KEY","prefix":"Bearer "}')
          )
            lists.push(exchange.request.path);
        },
      });
      assert.deepEqual(lists, ["/v1/store/orders"], "one reading of the list, not one per scenario");
      const checks = report.scenarios.flatMap((scenario) => scenario.checks);
      const notAgain = checks.filter((check) =>
        /the list is not read again, since reading it hit deadlineMs/.test(check.message),
      );
      assert.ok(
        ["list-no-paging.with-parameters.status", "cancel-race.cancel.list-during"].every((id) =>
          notAgain.some((check) => check.id === id && check.status === "skipped"),
        ),
        notAgain.map((check) => check.id).join(", "),
      );
      // The one reading is not judged where it was read, saying why: the run's limit is no failure of the target.
      assert.ok(
        checks.some(
          (check) =>
            check.id.startsWith("list-orders.list.") &&
            check.status === "skipped" &&
            check.notJudged === true &&
            /^not judged: the answer did not complete within the 500 ms deadlineMs .*; raise deadlineMs to judge it$/.test(
              check.message,
            ),
        ),
      );
    } finally {
      await target.close();
    }
  });

  it("a body that drips ends at --deadline: the run ends with a verdict, and so does the proxy's exchange", async () => {
    const target = await startHostileTarget("drip");
    try {
      const report = await runConformance({ baseUrl: target.url, apiKey: KEY, env: {}, deadlineMs: 1_000 });
      assert.ok(report.summary.failed > 0);
      assert.match(JSON.stringify(report), /did not complete within the 1000 ms deadlineMs/);
      const proxy = await runProxy({ upstream: target.url, port: 0, env: {}, deadlineMs: 1_000 });
      const outcome = await fetch(`${proxy.url}/store/orders`)
        .then((response) => response.text())
        .catch((error: Error) => error.message);
      assert.ok(typeof outcome === "string");
      const final = await proxy.close();
      assert.equal(final.traffic?.upstreamFailures, 1);
      assert.match(final.warnings.join("\n"), /not complete within the 1000 ms deadlineMs/);
    } finally {
      await target.close();
    }
  });

  it("an answer that is not a list is read up to 1 MiB: past that it is not judged, saying so", async () => {
    const target = await startHostileTarget("huge");
    try {
      const report = await runConformance({ baseUrl: target.url, apiKey: KEY, env: {} });
      assert.match(
        JSON.stringify(report),
        /not judged: the body is larger than the 1 MiB read of an answer that is not a list \(stopped reading at \d+ bytes\); its first 1048576 bytes break nothing the spec says/,
      );
    } finally {
      await target.close();
    }
  });
});

describe("the proxy serves only its own callers", () => {
  it("refuses a foreign Host name (DNS rebinding) without forwarding it, and echoes no Origin of its own accord", async () => {
    const seen = { count: 0 };
    const target = await startTarget({ seen });
    const proxy = await runProxy({
      upstream: target.url,
      port: 0,
      env: {},
      headers: { "X-Gateway-Key": "gw-secret-1" },
    });
    const reached = seen.count;
    try {
      const { port } = new URL(proxy.url);
      const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        request(
          { host: "127.0.0.1", port, path: "/v1/store/orders", headers: { host: "rebind.attacker.example" } },
          (incoming) => {
            let body = "";
            incoming.on("data", (chunk) => {
              body += chunk;
            });
            incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body }));
          },
        )
          .on("error", reject)
          .end();
      });
      assert.equal(rebound.status, 403);
      assert.equal(JSON.parse(rebound.body).code, "foreign_host");
      assert.equal(seen.count, reached, "nothing was forwarded");
    } finally {
      await target.close();
    }
    // A page of another origin is refused before anything is forwarded, and granted nothing.
    const foreign = await fetch(`${proxy.url}/store/orders`, {
      headers: { origin: "http://evil.example" },
    });
    assert.equal(foreign.status, 403);
    assert.equal((await foreign.json()).code, "foreign_origin");
    assert.equal(foreign.headers.get("access-control-allow-origin"), null);
    const report = await proxy.close();
    assert.equal(report.traffic?.exchanges, 0);
  });
});
