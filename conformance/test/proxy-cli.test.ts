import assert from "node:assert/strict";
import { once } from "node:events";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { XMLParser } from "fast-xml-parser";
import { createProxy } from "proxy";
import { generate } from "selfsigned";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ProxyProcess, startProxyProcess } from "../../test-support/proxy-process.ts";
import { PENDING_ID, SHIPPED_ID, TARGET_KEY, withTarget } from "../../test-support/target-server.ts";
import type { HarEntry } from "../proxy/har-writer.ts";
import type { Report } from "../reports/report.ts";
import { runConformance } from "../suite/runner.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";
import { json, startScriptedUpstream } from "./scripted-upstream.ts";

const BIN = fileURLToPath(new URL("../bin.ts", import.meta.url));
const folder = tempFolder("conformance-proxy-cli-");
/** The proxy command from the sources, on a free port, with no proxy from this machine's environment. */
function startProxy(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ProxyProcess> {
  return startProxyProcess(process.execPath, ["--import", "tsx", BIN, "proxy", "--port", "0", ...args], {
    env: { ...process.env, NO_COLOR: "", ...NO_PROXY_ENV, ...env },
  });
}

const suiteThrough = (url: string) =>
  runConformance({
    baseUrl: url,
    apiKey: TARGET_KEY,
    pendingOrderId: PENDING_ID,
    shippedOrderId: SHIPPED_ID,
    env: {},
  });

describe("petstore-conformance proxy (the command)", () => {
  it("needs --upstream: exit 2 with one line", async () => {
    const result = await cli(["proxy"], { PETSTORE_UPSTREAM: "" });
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      "error: --upstream is required, and the environment variable PETSTORE_UPSTREAM is empty (see petstore-conformance proxy --help)\n",
    );
  });

  it("an upstream it cannot reach at start: exit 2 with one line that says what to do", async () => {
    const result = await cli(["proxy", "--upstream", "http://127.0.0.1:9/v1", "--port", "0"], NO_PROXY_ENV);
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      "error: nothing accepts connections at 127.0.0.1:9 (ECONNREFUSED): is the service running, and is --upstream right?\n",
    );
    // Every report asked for is written all the same, holding the error: CI uploads them whatever the exit.
    const files = tempFolder("conformance-proxy-unreachable-");
    const reporters = ["junit", "json", "markdown", "html"].flatMap((name) => [
      "--reporter",
      `${name}:${join(files, `unreach.${name}`)}`,
    ]);
    const withReports = await cli(
      ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--port", "0", ...reporters],
      NO_PROXY_ENV,
    );
    assert.equal(withReports.code, 2);
    assert.equal(withReports.stderr, result.stderr);
    const junit = readFileSync(join(files, "unreach.junit"), "utf8");
    assert.match(junit, /errors="1"/);
    assert.match(junit, /<error message="nothing accepts connections at 127\.0\.0\.1:9/);
    const report = JSON.parse(readFileSync(join(files, "unreach.json"), "utf8")) as Report;
    assert.equal(report.ended?.kind, "error");
    assert.match(readFileSync(join(files, "unreach.markdown"), "utf8"), /conformance: ❌ error$/m);
    assert.match(readFileSync(join(files, "unreach.html"), "utf8"), /<title>Conformance error:/);
  });

  it("options it refuses: exit 2 with one line, and every report asked for says why", async () => {
    const cases: Array<{ args: string[]; line: RegExp }> = [
      // What a CI variable left unset gives: the recipe's summary step still finds the files.
      { args: ["--upstream", ""], line: /--upstream is empty/ },
      {
        args: ["--upstream", "http://127.0.0.1:9/v1", "--max-memory", "abc"],
        line: /--max-memory must be a size/,
      },
      {
        args: ["--upstreem", "http://127.0.0.1:9/v1"],
        line: /unknown option --upstreem: did you mean --upstream\?/,
      },
      // Refused for what they hold: neither is repeated anywhere.
      {
        args: ["--upstream", "http://127.0.0.1:9/v1", "--header", "X-Api-Key=topsecret4"],
        line: /--header takes 'Name: value' \(the one given has no colon; its text is not shown\)/,
      },
      { args: ["--upstream", "http://user:secretpw@127.0.0.1:9/v1"], line: /holds credentials/ },
    ];
    for (const { args, line } of cases) {
      const files = tempFolder("conformance-proxy-usage-");
      const reporters = ["junit", "json", "markdown"].flatMap((name) => [
        "--reporter",
        `${name}:${join(files, `usage.${name}`)}`,
      ]);
      const result = await cli(
        ["proxy", ...args, ...reporters, "--fail-on-violation", "--", "sh", "-c", "echo ran"],
        { ...NO_PROXY_ENV, PETSTORE_UPSTREAM: "" },
      );
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
      assert.match(result.stderr, line);
      assert.equal(result.stdout, "", "COMMAND never ran");
      assert.match(readFileSync(join(files, "usage.junit"), "utf8"), /errors="1"/);
      const report = JSON.parse(readFileSync(join(files, "usage.json"), "utf8")) as Report;
      assert.equal(report.ended?.kind, "error");
      assert.match(report.ended?.message ?? "", line);
      assert.match(report.target, /\(observed through the proxy\)$/);
      assert.match(readFileSync(join(files, "usage.markdown"), "utf8"), /conformance: ❌ error$/m);
      const reports = ["junit", "json", "markdown"].map((name) =>
        readFileSync(join(files, `usage.${name}`), "utf8"),
      );
      for (const text of [result.stderr, ...reports]) assert.doesNotMatch(text, /topsecret4|secretpw/);
    }
  });

  it("SIGTERM writes every report over the traffic; --har keeps each exchange; no secret anywhere", async () => {
    await withTarget({ quantityAsString: true }, async (upstream) => {
      const files = Object.fromEntries(
        ["json", "junit", "html", "markdown"].map((name) => [name, join(folder, `traffic.${name}`)]),
      );
      const har = join(folder, "traffic.har");
      const proxy = await startProxy([
        "--upstream",
        upstream,
        ...Object.entries(files).flatMap(([name, file]) => ["--reporter", `${name}:${file}`]),
        "--har",
        har,
        "--header",
        "X-Gateway-Key: gateway-secret-1",
      ]);
      const suite = await suiteThrough(proxy.url);
      const { code, stdout, stderr } = await proxy.stop("SIGTERM");
      assert.equal(code, 0, "without --fail-on-violation a violation does not fail the exit code");
      assert.match(stderr, /SIGTERM: stopping/);

      // One JSON line per exchange when standard output is not a terminal, then the pretty report.
      const lines = stdout.split("\n").filter((line) => line.startsWith("{"));
      assert.equal(lines.length, suite.requests);
      const list = lines
        .map((line) => JSON.parse(line))
        .find((entry) => entry.operation === "listOrders" && entry.status === 200);
      assert.equal(list.verdict, "failed");
      assert.equal(list.failed[0].id, "listOrders.body");
      assert.match(stdout, /✖ listOrders {2}GET \/store\/orders/);
      assert.match(stdout, /Coverage: documented statuses seen in the traffic/);

      const json = JSON.parse(readFileSync(files.json as string, "utf8")) as Report;
      assert.ok(json.summary.failed > 0);
      assert.equal(json.traffic?.exchanges, suite.requests);
      const junit = new XMLParser({ ignoreAttributes: false }).parse(
        readFileSync(files.junit as string, "utf8"),
      );
      assert.equal(junit.testsuites["@_failures"], "1");
      assert.match(readFileSync(files.html as string, "utf8"), /<h2 id="coverage-heading">Coverage<\/h2>/);
      assert.match(
        readFileSync(files.markdown as string, "utf8"),
        /\| `DELETE \/store\/orders\/\{orderId\}` \| 409 \| \d+ \|/,
      );

      const document = JSON.parse(readFileSync(har, "utf8")) as {
        log: { version: string; entries: HarEntry[] };
      };
      assert.equal(document.log.version, "1.2");
      assert.equal(document.log.entries.length, suite.requests);
      const listEntry = document.log.entries.find((entry) => entry.response.status === 200);
      assert.match(listEntry?.response.content.text ?? "", /"id":9007199254740993/, "ids exact in the HAR");
      const authorizations = document.log.entries.flatMap((entry) =>
        entry.request.headers
          .filter((header) => header.name.toLowerCase() === "authorization")
          .map((header) => header.value),
      );
      assert.ok(authorizations.includes("Bearer ***"));

      for (const [where, text] of [
        ["stdout", stdout],
        ["stderr", stderr],
        ["HAR", readFileSync(har, "utf8")],
        ...Object.values(files).map((file) => [file, readFileSync(file, "utf8")]),
      ] as Array<[string, string]>) {
        assert.ok(!text.includes(TARGET_KEY), `the key is not in ${where}`);
        assert.ok(!text.includes("gateway-secret-1"), `the gateway header is not in ${where}`);
      }
    });
  });

  it("hides every form of its credentials: from the environment, echoed as base64, %-encoded, a cookie's value, in a binary body; warns when bound beyond loopback", async () => {
    const gatewayKey = "gw/Secret+Key=42";
    const forms = [
      gatewayKey,
      Buffer.from(gatewayKey).toString("base64"),
      Buffer.from(gatewayKey).toString("base64url"),
      encodeURIComponent(gatewayKey),
    ];
    const cookieValue = "cookie-secret-9";
    const echo = `echoes ${forms.join(" ")} and ${cookieValue}`;
    const upstream = await startScriptedUpstream((request) =>
      request.url.endsWith("/blob")
        ? {
            status: 200,
            headers: [["Content-Type", "application/octet-stream"]],
            body: Buffer.concat([Buffer.from([0, 255, 1]), Buffer.from(echo)]),
          }
        : json(401, JSON.stringify({ code: "unauthorized", message: echo, status: 400 })),
    );
    const har = join(folder, "forms.har");
    const report = join(folder, "forms.json");
    try {
      const proxy = await startProxy(
        [
          "--upstream",
          upstream.url,
          "--host",
          "0.0.0.0",
          "--header-from-env",
          "X-Gateway-Key=GATEWAY_KEY",
          "--har",
          har,
          "--reporter",
          `json:${report}`,
        ],
        { GATEWAY_KEY: gatewayKey },
      );
      const base = proxy.url.replace("0.0.0.0", "127.0.0.1");
      const headers = { authorization: "Bearer wrong-key-5", cookie: `theme=dark; session=${cookieValue}` };
      assert.equal((await fetch(`${base}/store/orders`, { headers })).status, 401);
      assert.equal((await fetch(`${base}/blob`, { headers })).status, 200);
      const { stdout, stderr } = await proxy.stop("SIGTERM");
      assert.match(
        stderr,
        /^warning: the proxy listens on 0\.0\.0\.0, beyond this machine, and adds --header credentials/m,
      );
      assert.equal(
        upstream.received[1]?.rawHeaders.includes(gatewayKey),
        true,
        "the header went to the upstream",
      );
      const harText = readFileSync(har, "utf8");
      const blob = (JSON.parse(harText) as { log: { entries: HarEntry[] } }).log.entries.find((entry) =>
        entry.request.url.endsWith("/blob"),
      );
      assert.equal(blob?.response.content.encoding, "base64");
      const blobBytes = Buffer.from(blob?.response.content.text ?? "", "base64").toString("latin1");
      for (const [where, text] of [
        ["stdout", stdout],
        ["stderr", stderr],
        ["HAR", harText],
        ["HAR binary body", blobBytes],
        ["JSON report", readFileSync(report, "utf8")],
      ] as Array<[string, string]>) {
        for (const form of [...forms, cookieValue, "wrong-key-5"])
          assert.ok(!text.includes(form), `${JSON.stringify(form)} is not in ${where}`);
      }
      assert.match(blobBytes, /echoes \*\*\*/);
    } finally {
      await upstream.close();
    }
  });

  it("--fail-on-violation: exit 1 when a check failed, 0 when none did; SIGINT stops it too", async () => {
    await withTarget({ textContentType: true }, async (upstream) => {
      const proxy = await startProxy(["--upstream", upstream, "--fail-on-violation", "--reporter", "json"]);
      await suiteThrough(proxy.url);
      const { code, stdout } = await proxy.stop("SIGINT");
      assert.equal(code, 1);
      const report = JSON.parse(stdout.slice(stdout.indexOf("{\n"))) as Report;
      assert.ok(report.summary.failed > 0);
    });
    await withTarget({}, async (upstream) => {
      const proxy = await startProxy(["--upstream", upstream, "--fail-on-violation"]);
      await suiteThrough(proxy.url);
      const { code, stdout } = await proxy.stop("SIGTERM");
      assert.equal(code, 0, stdout);
    });
  });

  it("a --header or --header-from-env that no request can carry stops both commands at once: exit 2, one line naming the flag", async () => {
    await withTarget({}, async (upstream) => {
      const cases: Array<[string[], RegExp]> = [
        [["--header", "X-Key: a\r\nInjected: 1"], /^error: --header X-Key: the value holds a character/],
        [
          ["--header", "X-Key: \u043a\u043b\u044e\u0447"],
          /^error: --header X-Key: the value holds a character/,
        ],
        [["--header", "X-\u043a\u043b\u044e\u0447: v"], /^error: --header takes 'Name: value'/],
        [
          ["--header-from-env", "X-Key=BAD_VALUE"],
          /^error: --header-from-env X-Key: the value holds a character/,
        ],
      ];
      const commands = [
        ["proxy", "--upstream", upstream, "--port", "0"],
        ["--base-url", upstream, "--api-key", TARGET_KEY],
      ];
      // NUL cannot reach a command line or an environment: options.test.ts gives it to the parsers.
      for (const command of commands)
        for (const [flags, message] of cases) {
          const result = await cli([...command, ...flags], {
            ...NO_PROXY_ENV,
            BAD_VALUE: "secret\r\nX-More: 1",
          });
          assert.equal(result.code, 2, `${command[0]} ${flags.join(" ")}: ${result.stderr}`);
          assert.match(result.stderr, message);
          assert.equal(result.stderr.split("\n").length, 2, result.stderr);
          assert.doesNotMatch(result.stderr, /secret/);
        }
    });
  });

  it("--fail-on-violation fails a run that judged no exchange, saying so in one line", async () => {
    await withTarget({}, async (upstream) => {
      const proxy = await startProxy(["--upstream", upstream, "--fail-on-violation"]);
      const { code, stderr } = await proxy.stop("SIGTERM");
      assert.equal(code, 1);
      assert.match(stderr, /^error: --fail-on-violation: no exchange was judged, so nothing was checked$/m);
    });
  });

  it("signals relayed again and again during the stop do not cut the reports", async () => {
    await withTarget({}, async (upstream) => {
      const folder = tempFolder("petstore-signals-");
      const proxy = await startProxy([
        "--upstream",
        upstream,
        "--fail-on-violation",
        "--reporter",
        `json:${join(folder, "proxy.json")}`,
        "--reporter",
        `junit:${join(folder, "proxy.xml")}`,
        "--har",
        join(folder, "proxy.har"),
      ]);
      await suiteThrough(proxy.url);
      const exited = once(proxy.child, "exit");
      for (const signal of ["SIGTERM", "SIGTERM", "SIGINT", "SIGHUP", "SIGTERM"] as const)
        proxy.child.kill(signal);
      const [code] = await exited;
      assert.equal(code, 0);
      const report = JSON.parse(readFileSync(join(folder, "proxy.json"), "utf8")) as Report;
      assert.ok((report.traffic?.judged ?? 0) > 0);
      assert.match(readFileSync(join(folder, "proxy.xml"), "utf8"), /<\/testsuites>\s*$/);
      assert.ok(JSON.parse(readFileSync(join(folder, "proxy.har"), "utf8")).log.entries.length > 0);
      assert.deepEqual(readdirSync(folder).sort(), ["proxy.har", "proxy.json", "proxy.xml"]);
    });
  });
});

/** A COMMAND's script: reads the list through PETSTORE_PROXY_URL, prints the status, exits with argv's code. */
const READ_LIST = `
fetch(process.env.PETSTORE_PROXY_URL + "/store/orders", { headers: { authorization: "Bearer ${TARGET_KEY}" } })
  .then((response) => response.text().then(() => response.status))
  .then(console.log, (error) => console.log(error.message))
  .finally(() => { process.exitCode = Number(process.argv[1] ?? 0); });
`;

/** `petstore-conformance proxy --port 0 --upstream URL [options] -- node -e READ_LIST [code]`, to its exit. */
const wrapReadList = (upstream: string, options: string[], code = 0) =>
  cli(
    [
      "proxy",
      "--port",
      "0",
      "--upstream",
      upstream,
      ...options,
      "--",
      process.execPath,
      "-e",
      READ_LIST,
      `${code}`,
    ],
    NO_PROXY_ENV,
  );

describe("petstore-conformance proxy -- COMMAND", { concurrency: true }, () => {
  it("a report or HAR in folders not there yet is made at start; one that cannot be is refused before COMMAND", async () => {
    const upstream = await startScriptedUpstream(() => json(200, "[]"));
    try {
      const root = tempFolder("conformance-proxy-places-");
      const har = join(root, "new", "traffic.har");
      const report = join(root, "more", "proxy.json");
      const made = await wrapReadList(upstream.url, ["--har", har, "--reporter", `json:${report}`]);
      assert.equal(made.code, 0, made.stderr);
      assert.equal(JSON.parse(readFileSync(har, "utf8")).log.entries.length, 1);
      assert.equal((JSON.parse(readFileSync(report, "utf8")) as Report).traffic?.judged, 1);

      const plain = join(root, "plain");
      writeFileSync(plain, "");
      for (const flags of [
        ["--har", join(plain, "p.har")],
        ["--reporter", `junit:${join(plain, "p.xml")}`],
      ]) {
        const refused = await wrapReadList(upstream.url, flags);
        assert.equal(refused.code, 2, refused.stderr);
        assert.match(
          refused.stderr,
          /^error: (the HAR: )?cannot write .*plain\/p\.(har|xml): its folder .*plain cannot be made: a file is in the way \(EEXIST\)(; nothing was run)?\n$/,
        );
        assert.equal(refused.stdout, "", "COMMAND did not run");
      }
    } finally {
      await upstream.close();
    }
  });

  it("runs the suite as COMMAND through PETSTORE_PROXY_URL, then writes the reports; exit 0", async () => {
    await withTarget({}, async (upstream) => {
      const report = join(tempFolder("petstore-wrapped-"), "proxy.json");
      const suite = `exec "${process.execPath}" --import tsx "${BIN}" --base-url "$PETSTORE_PROXY_URL" --api-key ${TARGET_KEY} --pending-order-id ${PENDING_ID} --shipped-order-id ${SHIPPED_ID} --reporter json`;
      const args = ["proxy", "--port", "0", "--upstream", upstream, "--fail-on-violation"];
      const { code, stdout, stderr } = await cli(
        [...args, "--reporter", `json:${report}`, "--", "sh", "-c", suite],
        NO_PROXY_ENV,
      );
      assert.equal(code, 0, stderr);
      // COMMAND's stdout is its own (the suite's JSON report, whole); then the proxy's pretty summary, once
      // COMMAND has ended. The proxy's exchange lines go to stderr.
      const summary = stdout.indexOf("Petstore Store Orders conformance:");
      assert.equal((JSON.parse(stdout.slice(0, summary)) as Report).summary.failed, 0);
      assert.match(stderr, /"verdict":"passed","operation":"cancelOrder"/);
      assert.match(stderr, /sh exited with 0: stopping; the reports cover every exchange/);
      const written = JSON.parse(readFileSync(report, "utf8")) as Report;
      assert.equal(written.summary.failed, 0);
      assert.ok((written.traffic?.judged ?? 0) >= 8);
    });
  });

  it("COMMAND passed but the traffic broke a rule: 1 with --fail-on-violation, 0 without", async () => {
    await withTarget({ textContentType: true }, async (upstream) => {
      const gated = await wrapReadList(upstream, ["--fail-on-violation", "--reporter", "json"]);
      assert.equal(gated.code, 1, gated.stderr);
      // COMMAND's own exit said 0: the last line says why the gate fails.
      assert.match(
        gated.stderr,
        /exited with 0: stopping[^\n]*\nerror: --fail-on-violation: \d+ checks? failed/,
      );
      assert.match(gated.stdout, /^200\n/);
      assert.ok((JSON.parse(gated.stdout.slice(gated.stdout.indexOf("{"))) as Report).summary.failed > 0);
      const ungated = await wrapReadList(upstream, []);
      assert.equal(ungated.code, 0, ungated.stderr);
    });
  });

  it("--quiet: no line per exchange beside COMMAND's output; the report judges the traffic as before", async () => {
    await withTarget({}, async (upstream) => {
      const loud = await wrapReadList(upstream, ["--reporter", "json"]);
      assert.match(loud.stderr, /"operation":"listOrders"/);
      const quiet = await wrapReadList(upstream, ["--quiet", "--reporter", "json"]);
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.doesNotMatch(quiet.stderr, /"operation"/);
      assert.match(quiet.stderr, /exited with 0: stopping/);
      assert.match(quiet.stdout, /^200\n/);
      const report = JSON.parse(quiet.stdout.slice(quiet.stdout.indexOf("{"))) as Report;
      assert.equal(report.traffic?.judged, 1);
    });
  });

  it("COMMAND failed: its exit code, and every report says the step failed, none passed", async () => {
    await withTarget({}, async (upstream) => {
      const folder = tempFolder("petstore-wrapped-");
      const reporters = ["junit:proxy.xml", "markdown:proxy.md", "json:proxy.json", "html:proxy.html"];
      const { code, stderr } = await wrapReadList(
        upstream,
        [
          "--fail-on-violation",
          ...reporters.flatMap((each) => ["--reporter", each.replace(":", `:${folder}/`)]),
        ],
        4,
      );
      assert.equal(code, 4, stderr);
      const junit = readFileSync(join(folder, "proxy.xml"), "utf8");
      assert.match(junit, /<testsuites[^>]* failures="1"/);
      assert.match(junit, /name="run: the wrapped command failed"[\s\S]*type="CommandFailed"/);
      const markdown = readFileSync(join(folder, "proxy.md"), "utf8");
      assert.match(markdown, /conformance: ❌ command failed/);
      assert.doesNotMatch(markdown, /passed$/m);
      const json = JSON.parse(readFileSync(join(folder, "proxy.json"), "utf8"));
      assert.equal(json.outcome.verdict, "command failed");
      assert.match(json.ended.message, /exited with 4/);
      assert.match(readFileSync(join(folder, "proxy.html"), "utf8"), /<title>Conformance command failed/);

      // A COMMAND that never ran is said as such, not as an exit code a reader would look for in its log.
      const notRun = join(folder, "not-run.json");
      const missing = await cli(
        [
          "proxy",
          "--port",
          "0",
          "--upstream",
          upstream,
          "--reporter",
          `json:${notRun}`,
          "--",
          "no-such-command-anywhere",
        ],
        NO_PROXY_ENV,
      );
      assert.equal(missing.code, 127, missing.stderr);
      assert.match(missing.stderr, /^cannot run "no-such-command-anywhere": not found \(ENOENT\): stopping/m);
      const ended = JSON.parse(readFileSync(notRun, "utf8")).ended;
      assert.equal(ended.message, 'cannot run "no-such-command-anywhere": not found (ENOENT)');
    });
  });

  it("a stop signal while COMMAND runs: the reports say interrupted, not passed", async () => {
    await withTarget({}, async (upstream) => {
      const report = join(tempFolder("petstore-wrapped-"), "proxy.json");
      const proxy = await startProxy([
        "--upstream",
        upstream,
        "--reporter",
        `json:${report}`,
        "--",
        "sh",
        "-c",
        "sleep 30",
      ]);
      await suiteThrough(proxy.url);
      const exited = once(proxy.child, "exit");
      proxy.child.kill("SIGTERM");
      const [code] = await exited;
      assert.equal(code, 143);
      const written = JSON.parse(readFileSync(report, "utf8"));
      assert.equal(written.outcome.verdict, "interrupted");
      assert.equal(written.ended.signal, "SIGTERM");
      assert.ok((written.traffic?.judged ?? 0) > 0);
    });
  });

  it("a broken upstream under the wrapper: COMMAND sees it, the gate fails, the reports say why", async () => {
    const gate = ["--fail-on-violation", "--reporter", "json"];
    await withTarget({ down: true }, async (upstream) => {
      const { code, stdout, stderr } = await wrapReadList(upstream, gate);
      assert.equal(code, 1, stderr);
      assert.match(stdout, /^503\n/);
      const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as Report;
      assert.ok(report.summary.failed > 0);
      assert.match(report.health ?? "", /the target looks down/);
    });
    // An answer that breaks off is judged in part at most: with nothing failed in its part, the gate does
    // not pass it.
    await withTarget({ listCut: "short-content-length" }, async (upstream) => {
      const { code, stdout, stderr } = await wrapReadList(upstream, gate);
      assert.equal(code, 2, stderr);
      assert.match(stdout, /^terminated\n/);
      const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as Report;
      assert.match(report.warnings.join("\n"), /got no whole answer from the upstream/);
      assert.match(report.warnings.join("\n"), /1 exchange ended without a whole answer/);
      assert.match(stderr, /^error: --fail-on-violation: 1 exchange ended without a whole answer/m);
    });
  });

  it("a list judged only in part: 2 with --fail-on-violation, saying so in one line", async () => {
    // One valid order whose note is longer than the longest string the judge reads: nothing fails.
    const note = "n".repeat(2_200_000);
    const order = `{"id":1,"petId":1,"quantity":1,"shipDate":"2026-11-02T10:00:00Z","complete":false,"note":"${note}"}`;
    const upstream = await startScriptedUpstream(() => json(200, `[${order}]`));
    try {
      const { code, stdout, stderr } = await wrapReadList(upstream.url, [
        "--max-string",
        "100KiB",
        "--fail-on-violation",
        "--reporter",
        "json",
      ]);
      assert.equal(code, 2, stderr);
      const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as Report;
      assert.equal(report.summary.failed, 0);
      assert.equal(report.traffic?.judgedInPart, 1);
      assert.match(
        stderr,
        /^error: --fail-on-violation: 1 exchange was judged only in part or not at all, the first #1 GET \/v1\/store\/orders → 200: not judged: .*\(--max-string raises it\); nothing failed, but not everything was checked$/m,
      );
      // A body past --max-body is not judged at all: the same.
      const past = await wrapReadList(upstream.url, ["--max-body", "400", "--fail-on-violation"]);
      assert.equal(past.code, 2, past.stderr);
      assert.match(
        past.stderr,
        /^error: --fail-on-violation: 1 exchange was judged only in part or not at all/m,
      );
    } finally {
      await upstream.close();
    }
  });

  it("the reader's limits hold for a small list kept whole as for a large one", async () => {
    const order = `{"id":1,"petId":1,"quantity":1,"shipDate":"2026-11-02T10:00:00Z","complete":false,"note":"${"n".repeat(200)}"}`;
    const upstream = await startScriptedUpstream(() => json(200, `[${order}]`));
    try {
      const { code, stderr } = await wrapReadList(upstream.url, [
        "--max-string",
        "100",
        "--fail-on-violation",
      ]);
      assert.equal(code, 2, stderr);
      assert.match(
        stderr,
        /^error: --fail-on-violation: 1 exchange was judged only in part or not at all, the first .*--max-string/m,
      );
    } finally {
      await upstream.close();
    }
  });

  it("an answer cut after its head went out is reported with the status the client got", async () => {
    // Trailers past the header limit break the answer off after its head and body were sent on.
    const upstream = createTcpServer((socket) => {
      socket.on("error", () => {});
      socket.once("data", () =>
        socket.end(
          `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n${"X-T: v\r\n".repeat(5000)}\r\n`,
        ),
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
      const { stderr } = await wrapReadList(url, []);
      const line = stderr.split("\n").find((text) => text.startsWith('{"seq":1,'));
      assert.ok(line, stderr);
      const exchange = JSON.parse(line) as { status: number; bodyCut?: boolean; verdict: string };
      // What came of it (an empty list) was judged, but not as a whole answer.
      assert.deepEqual([exchange.status, exchange.bodyCut, exchange.verdict], [200, true, "partly-judged"]);
    } finally {
      upstream.close();
    }
  });

  it("nothing judged: 1 with --fail-on-violation, saying so in one line and in every report", async () => {
    await withTarget({}, async (upstream) => {
      const files = tempFolder("conformance-proxy-nothing-");
      const reporters = ["junit", "markdown", "html"].flatMap((name) => [
        "--reporter",
        `${name}:${join(files, `nothing.${name}`)}`,
      ]);
      const { code, stderr } = await cli(
        [
          "proxy",
          "--port",
          "0",
          "--upstream",
          upstream,
          "--fail-on-violation",
          ...reporters,
          "--",
          process.execPath,
          "-e",
          "",
        ],
        NO_PROXY_ENV,
      );
      assert.equal(code, 1);
      assert.match(stderr, /^error: --fail-on-violation: no exchange was judged, so nothing was checked$/m);
      const markdown = readFileSync(join(files, "nothing.markdown"), "utf8");
      assert.match(markdown, /^### Petstore Store Orders conformance: ❌ nothing judged$/m);
      const html = readFileSync(join(files, "nothing.html"), "utf8");
      assert.match(html, /<title>Conformance nothing judged:/);
      assert.doesNotMatch(`${markdown}${html}`, /✅ passed|<span class="passed">passed/);
      // CI's test tab shows the failed gate as a failed test, not as all skipped.
      const junit = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(
        readFileSync(join(files, "nothing.junit"), "utf8"),
      ).testsuites.testsuite;
      assert.equal(Number(junit.failures), 1);
      const run = [junit.testcase]
        .flat()
        .find((testcase: { name: string }) => testcase.name.startsWith("run:"));
      assert.match(run?.failure?.message ?? "", /no exchange was judged/);
    });
  });

  it("an upstream that dies mid-run: the gate does not pass what it never answered, and names why", async () => {
    const upstream = await startDyingUpstream();
    try {
      const files = tempFolder("conformance-proxy-dying-");
      const { code, stdout, stderr } = await wrapScript(
        upstream.url,
        ["--fail-on-violation", "--reporter", "json", "--reporter", `junit:${join(files, "dying.xml")}`],
        LIST_DIE_CANCEL,
        { DIE_URL: upstream.dieUrl },
      );
      assert.equal(code, 2, stderr);
      assert.match(stdout, /^200\n502\n/);
      const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as Report;
      assert.equal(report.summary.failed, 0);
      assert.equal(report.traffic?.upstreamFailures, 1);
      assert.match(
        stderr,
        /^error: --fail-on-violation: 1 request got no whole answer from the upstream, so it was not judged whole: #\d+ DELETE [^\n]*; nothing failed, but not everything was checked$/m,
      );
      const junit = readFileSync(join(files, "dying.xml"), "utf8");
      assert.match(junit, /<error message="1 request got no whole answer from the upstream/);
    } finally {
      await upstream.close();
    }
  });

  it("an upstream down for all the traffic: named as such, not as traffic that never came", async () => {
    const upstream = await startDyingUpstream();
    try {
      const { code, stdout, stderr } = await wrapScript(
        upstream.url,
        ["--fail-on-violation", "--reporter", "json"],
        DIE_THEN_LIST,
        { DIE_URL: upstream.dieUrl },
      );
      assert.equal(code, 2, stderr);
      assert.match(stdout, /^502\n/);
      assert.doesNotMatch(stderr, /no exchange was judged/);
      assert.match(
        stderr,
        /^error: --fail-on-violation: 1 request got no whole answer from the upstream[^\n]*GET/m,
      );
      const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as Report;
      const list = report.scenarios.find((scenario) => scenario.id === "listOrders");
      assert.equal(list?.status, "skipped");
      assert.match(list?.reason ?? "", /^1 request for this operation got no whole answer from the upstream/);
    } finally {
      await upstream.close();
    }
  });
});

/**
 * An upstream with an empty order list that stops listening, for good, once its `dieUrl` is asked for (by
 * the wrapped COMMAND, directly): what the proxy forwards after that finds nobody there.
 */
async function startDyingUpstream() {
  const server = createServer((request, response) => {
    if (request.url === "/die") {
      response.end("dying", () => {
        server.close();
        server.closeAllConnections();
      });
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end("[]");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/v1`,
    dieUrl: `${base}/die`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        if (!server.listening) resolve();
      }),
  };
}

const THROUGH_PROXY = `
const send = (method, path) =>
  fetch(process.env.PETSTORE_PROXY_URL + path, { method, headers: { authorization: "Bearer ${TARGET_KEY}" } })
    .then((response) => response.text().then(() => console.log(response.status)));
const die = () => fetch(process.env.DIE_URL).then((response) => response.text());
`;
/** Lists through the proxy, makes the upstream die, then cancels through the proxy. */
const LIST_DIE_CANCEL = `${THROUGH_PROXY}
send("GET", "/store/orders").then(die).then(() => send("DELETE", "/store/orders/1"));
`;
/** Makes the upstream die, then lists through the proxy. */
const DIE_THEN_LIST = `${THROUGH_PROXY}
die().then(() => send("GET", "/store/orders"));
`;

/** `petstore-conformance proxy --port 0 --upstream URL [options] -- node -e SCRIPT`, to its exit. */
const wrapScript = (upstream: string, options: string[], script: string, env: NodeJS.ProcessEnv) =>
  cli(["proxy", "--port", "0", "--upstream", upstream, ...options, "--", process.execPath, "-e", script], {
    ...NO_PROXY_ENV,
    ...env,
  });

/** An upstream that answers a request once its body has come, counting the request heads it saw. */
async function startWaitingUpstream() {
  const heads = { count: 0, seen: new EventTarget() };
  const server = createServer((request, response) => {
    heads.count++;
    heads.seen.dispatchEvent(new Event("head"));
    request.resume();
    request.on("end", () => {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ code: "unauthorized", message: "no key" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const headsReach = async (count: number) => {
    while (heads.count < count) await once(heads.seen, "head");
  };
  return { url, headsReach, close: () => server.close() };
}

/** A raw client connection; `ended` resolves to what came back before the proxy closed it. */
function rawClient(proxyUrl: string, head: string) {
  const { port } = new URL(proxyUrl);
  const socket: Socket = connect(Number(port), "127.0.0.1");
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
  });
  // A connection closed unread may be reset under a request already sent.
  socket.on("error", () => {});
  socket.write(head);
  // Not events.once, which would reject on the reset.
  const ended = new Promise<string>((resolve) => socket.once("close", () => resolve(received)));
  return { socket, ended };
}

describe("petstore-conformance proxy: clients that hold connections", () => {
  it("past --max-connections with every connection busy, a new one is closed unread; --request-timeout cuts bodies that never end with 408; then a client is served", {
    timeout: 120_000,
  }, async () => {
    const upstream = await startWaitingUpstream();
    const proxy = await startProxy([
      "--upstream",
      upstream.url,
      "--max-connections",
      "4",
      "--request-timeout",
      "2s",
    ]);
    try {
      const host = new URL(proxy.url).host;
      // Bodies announced at 100 bytes, of which one ever comes.
      const slow = Array.from({ length: 4 }, () =>
        rawClient(
          proxy.url,
          `POST /v1/orders HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
        ),
      );
      // Each slow request has reached the upstream: all four connections are busy.
      await upstream.headsReach(4);
      const crowded = rawClient(proxy.url, `GET /v1/orders HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      assert.equal(await crowded.ended, "", "a connection past the cap, all of them busy, is closed unread");
      for (const { ended } of slow) assert.match(await ended, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      const served = await fetch(`${proxy.url}/orders`);
      assert.equal(served.status, 401);
    } finally {
      await proxy.stop("SIGTERM");
      upstream.close();
    }
  });
});

describe("the proxy reaches an upstream as the suite reaches a target", () => {
  let certificate: { cert: string; private: string };
  let forward: Server;
  let forwardUrl: string;
  const tunnelled: string[] = [];
  before(async () => {
    certificate = (await generate([{ name: "commonName", value: "127.0.0.1" }], {
      keySize: 2048,
      algorithm: "sha256",
      extensions: [{ name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] }],
    })) as typeof certificate;
    forward = createProxy(createServer());
    forward.on("connect", (request: IncomingMessage) => tunnelled.push(`CONNECT ${request.url}`));
    await new Promise<void>((resolve) => forward.listen(0, "127.0.0.1", resolve));
    forwardUrl = `http://127.0.0.1:${(forward.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => forward.close(() => resolve())));

  it("an untrusted certificate stops it at start; --ca-file trusts it, through a forward proxy as well", async () => {
    await withTarget({ tls: { key: certificate.private, cert: certificate.cert } }, async (upstream) => {
      const untrusted = await cli(["proxy", "--upstream", upstream, "--port", "0"], NO_PROXY_ENV);
      assert.equal(untrusted.code, 2);
      assert.match(
        untrusted.stderr,
        /^error: the certificate of 127\.0\.0\.1:\d+ is not trusted \(\w+\): pass --ca-file/,
      );

      const ca = join(folder, "ca.pem");
      writeFileSync(ca, certificate.cert);
      tunnelled.length = 0;
      const proxy = await startProxy(["--upstream", upstream, "--ca-file", ca, "--fail-on-violation"], {
        https_proxy: forwardUrl.replace("http://", "http://user:proxy-secret@"),
      });
      const suite = await suiteThrough(proxy.url);
      assert.equal(suite.summary.failed, 0);
      const { code, stdout, stderr } = await proxy.stop();
      assert.equal(code, 0, stdout);
      assert.ok(
        tunnelled.length > 0 && tunnelled.every((line) => line === `CONNECT ${new URL(upstream).host}`),
      );
      assert.ok(
        !`${stdout}${stderr}`.includes("proxy-secret"),
        "the forward proxy's password is never shown",
      );
    });
  });
});
