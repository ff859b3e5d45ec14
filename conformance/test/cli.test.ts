import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { XMLParser } from "fast-xml-parser";
import { tempFolder } from "../../common/temp-folder.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { type RunningTarget, SHIPPED_ID, startTarget, TARGET_KEY } from "../../test-support/target-server.ts";
import type { RunOutcome } from "../reports/outcome.ts";
import type { Report } from "../reports/report.ts";
import { MOCK_KEY, MOCK_PENDING_ID, MOCK_RACE_ID, MOCK_SHIPPED_ID } from "./mock-ids.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";
import { json, startScriptedUpstream } from "./scripted-upstream.ts";

describe("petstore-conformance (the CLI, end to end)", () => {
  let mock: MockProcess;
  // A fresh broken target per test: its defect changes its state, so runs must not share one.
  let broken: RunningTarget;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  beforeEach(async () => {
    broken = await startTarget({ shippedCancellable: true });
  });
  afterEach(() => broken.close());
  after(() => mock.stop());
  /** The suite against the mock with its three order ids, a JSON report, in `session`, and `more` flags. */
  const jsonRunOnMock = (session: string, ...more: string[]) =>
    cli(
      [
        "--base-url",
        mock.url,
        "--pending-order-id",
        MOCK_PENDING_ID,
        "--shipped-order-id",
        MOCK_SHIPPED_ID,
        "--race-order-id",
        MOCK_RACE_ID,
        "--reporter",
        "json",
        "--session",
        session,
        ...more,
      ],
      { PETSTORE_API_KEY: MOCK_KEY },
    );

  it("exits 2 when nothing failed but a limit kept checks from being judged whole, saying so in one line", async () => {
    const result = await jsonRunOnMock(
      "cli-small-memory",
      // Room for the ids of five orders in each reading a run holds: the twelve-order list is past it.
      "--max-memory",
      String(Math.ceil((5 * 32 * 6 * 8) / 7)),
    );
    assert.equal(result.code, 2, result.stderr);
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.summary.failed, 0);
    const notJudged = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .filter((check) => check.notJudged);
    assert.ok(notJudged.length >= 3);
    assert.match(
      result.stderr,
      new RegExp(
        `^petstore-conformance: ${notJudged.length} checks were not judged whole, the first ${notJudged[0]?.id} \\(not judged: .*--max-memory.*\\); nothing failed, but the run is not a pass$`,
        "m",
      ),
    );
  });

  it("exits 2, not 1, when a body is past the run's own --max-body: the spec sets no size limit", async () => {
    const result = await jsonRunOnMock("cli-small-body", "--max-body", "200");
    assert.equal(result.code, 2, result.stderr);
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.summary.failed, 0);
    const body = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .find((check) => check.id === "list-orders.list.body");
    assert.equal(body?.notJudged, true);
    assert.match(body?.message ?? "", /^not judged: the body is larger than the 200 bytes --max-body allows/);
    assert.match(result.stderr, /nothing failed, but the run is not a pass$/m);
  });

  it("a report in folders that do not exist yet is written there: they are made at start", async () => {
    const file = join(tempFolder("conformance-new-folder-"), "reports", "ci", "conformance.xml");
    const result = await jsonRunOnMock("cli-new-folder", "--reporter", `junit:${file}`);
    assert.equal(result.code, 0, result.stderr);
    assert.match(readFileSync(file, "utf8"), /<\/testsuites>\s*$/);
  });

  it("a report that cannot be written is refused at start in one line (exit 2); the others say so", async () => {
    const folder = tempFolder("conformance-unwritable-");
    const plain = join(folder, "plain");
    writeFileSync(plain, "");
    const blocked = join(plain, "conformance.xml");
    const json = join(folder, "conformance.json");
    // Nothing listens at the address: a run that started would say so instead.
    const result = await cli([
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--api-key",
      "k",
      "--reporter",
      `junit:${blocked}`,
      "--reporter",
      `json:${json}`,
    ]);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(
      result.stderr,
      `error: cannot write ${blocked}: its folder ${plain} cannot be made: a file is in the way (EEXIST); nothing was run\n`,
    );
    const report = JSON.parse(readFileSync(json, "utf8")) as Report;
    assert.equal(report.ended?.kind, "error");
    assert.match(report.ended?.message ?? "", /^cannot write .*; nothing was run$/);
  });

  it("a base address the API is not routed at: exit 2 before anything is cancelled, naming the fix", async () => {
    const origin = new URL(mock.url).origin;
    const cases = [
      [origin, `use --base-url ${origin}/v1 if it is served there`],
      [`${mock.url}/store/orders`, `It names an endpoint, not the base address: use --base-url ${mock.url}`],
    ] as const;
    for (const [baseUrl, fix] of cases) {
      const session = `cli-unrouted-${cases.findIndex(([url]) => url === baseUrl)}`;
      const result = await cli(
        ["--base-url", baseUrl, "--pending-order-id", MOCK_PENDING_ID, "--session", session],
        { PETSTORE_API_KEY: MOCK_KEY },
      );
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr.split("\n").filter(Boolean).length, 1, result.stderr);
      assert.match(
        result.stderr,
        /^error: GET \S+\/store\/orders was answered 404, as was every request sent with the key: nothing of the API answers at /,
      );
      assert.ok(result.stderr.includes(fix), result.stderr);
      const listed = await fetch(`${origin}/__control/orders?id=${MOCK_PENDING_ID}`, {
        headers: { "x-mock-session": session },
      });
      assert.match(await listed.text(), /"status":"pending"/, "the pending order was not cancelled");
    }
  });

  it("a target that is not serving (502, 503, 504 to the first list): exit 2 in one line, nothing judged", async () => {
    for (const status of [502, 503, 504]) {
      const down = await startScriptedUpstream(() => ({
        status,
        headers: [
          ["content-type", "application/json"],
          ["retry-after", "1"],
        ],
        body: '{"code":"store_unavailable","message":"try again shortly"}',
      }));
      try {
        const result = await cli(["--base-url", down.url, "--api-key", "k", "--pending-order-id", "1"], {});
        assert.equal(result.code, 2, result.stderr);
        assert.equal(result.stderr.split("\n").filter(Boolean).length, 1, result.stderr);
        assert.match(
          result.stderr,
          new RegExp(
            `^error: the target is not serving: GET \\S+/v1/store/orders was answered ${status} \\(Retry-After: 1 s\\), .* nothing was judged`,
          ),
        );
        assert.deepEqual(
          down.received.map((request) => request.method),
          ["GET"],
          "nothing cancelled on a target that is down",
        );
      } finally {
        await down.close();
      }
    }
  });

  it("a deployment that routes the API but has no list is judged: its list fails (exit 1)", async () => {
    const upstream = await startScriptedUpstream(({ method, url, rawHeaders }) => {
      const keyed = rawHeaders.includes(`Bearer ${TARGET_KEY}`);
      if (!keyed) return json(401, '{"code":"unauthorized","message":"no key","status":401}');
      if (method === "DELETE" && /^\/v1\/store\/orders\/\d+$/.test(url))
        return json(404, '{"code":"not_found","message":"no such order","status":404}');
      if (method === "DELETE") return json(400, '{"code":"bad_id","message":"not an id","status":400}');
      return json(404, '{"code":"not_found","message":"no route","status":404}');
    });
    try {
      const result = await cli(["--base-url", upstream.url, "--api-key", TARGET_KEY, "--reporter", "json"]);
      assert.equal(result.code, 1, result.stderr);
      const report = JSON.parse(result.stdout) as Report;
      const status = report.scenarios
        .flatMap((scenario) => scenario.checks)
        .find((check) => check.id === "list-orders.list.status");
      assert.equal(status?.status, "failed");
      assert.match(status?.message ?? "", /^expected 200, got 404/);
    } finally {
      await upstream.close();
    }
  });

  it("exits 0 on a conforming target, with a JSON report and the int64 id sent exactly", async () => {
    const result = await jsonRunOnMock("cli-run");
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.summary.failed, 0);
    assert.equal(report.summary.skipped, 0);
    assert.ok(report.summary.passed > 100);
    assert.equal(report.target, mock.url);
    for (const scenario of report.scenarios) {
      assert.deepEqual(
        Object.keys(scenario).filter((k) => !["reason"].includes(k)),
        ["id", "title", "status", "checks"],
      );
    }
    assert.ok(!result.stdout.includes(MOCK_KEY), "the key never appears in the report");
    const cancelPath = `/v1/store/orders/${MOCK_PENDING_ID}`;
    const cancel = (session?: string) =>
      fetch(`${mock.url}/store/orders/${MOCK_PENDING_ID}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${MOCK_KEY}`, ...(session ? { "x-mock-session": session } : {}) },
      });
    assert.equal(
      (await cancel("cli-run")).status,
      409,
      `${cancelPath} was cancelled by the run, in its session`,
    );
    assert.equal((await cancel()).status, 204, "the default world was left alone");
  });

  it("exits 1 on a broken target, with JUnit XML that names the failing scenario", async () => {
    const result = await cli([
      "--base-url",
      broken.url,
      "--api-key",
      TARGET_KEY,
      "--shipped-order-id",
      SHIPPED_ID,
      "--reporter",
      "junit",
    ]);
    assert.equal(result.code, 1, result.stderr);
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(result.stdout);
    const suite = xml.testsuites.testsuite;
    const cases = suite.testcase as Array<{ name: string; failure?: { message: string }; skipped?: unknown }>;
    assert.equal(cases.length, 9);
    assert.equal(Number(suite.failures), 1);
    assert.equal(Number(suite.skipped), 2, "the pending and race scenarios, without their orders");
    const failed = cases.filter((c) => c.failure);
    assert.deepEqual(
      failed.map((c) => c.name.split(":")[0]),
      ["cancel-shipped"],
    );
    assert.match(failed[0]?.failure?.message ?? "", /cancel-shipped\.cancel\.status: expected 409, got 204/);
    assert.ok(cases.find((c) => c.name.startsWith("cancel-pending"))?.skipped !== undefined);
    assert.ok(!result.stdout.includes(TARGET_KEY));
  });

  it("prints a plain pretty report when not on a terminal and writes --output", async () => {
    const output = join(tempFolder("conformance-cli-"), "report.json");
    const result = await cli([
      "--base-url",
      broken.url,
      "--api-key",
      TARGET_KEY,
      "--shipped-order-id",
      SHIPPED_ID,
      "--reporter",
      "json",
      "--output",
      output,
    ]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.ok(!result.stdout.includes("\u001b["), "no colour codes in a pipe");
    assert.match(result.stdout, /✖ cancel-shipped/);
    assert.match(result.stdout, /spec: §3, §4\.2/);
    assert.match(result.stdout, /request: DELETE \/v1\/store\/orders\/2/);
    assert.match(result.stdout, /authorization: Bearer \*\*\*/);
    assert.match(result.stdout, /^\d+ passed, 1 failed, \d+ skipped$/m);
    assert.ok(!result.stdout.includes(TARGET_KEY));
    const written = JSON.parse(readFileSync(output, "utf8")) as Report;
    assert.equal(written.summary.failed, 1);
    const failedCheck = written.scenarios.flatMap((s) => s.checks).find((c) => c.status === "failed");
    assert.equal(failedCheck?.request?.headers.authorization, "Bearer ***");
    assert.equal(failedCheck?.response?.status, 204);
  });

  it("exits 2 with one line on bad usage and on an unreachable target", async () => {
    const missing = await cli(["--api-key", "k"]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error: --base-url \(or PETSTORE_BASE_URL\) is required/);
    const badId = await cli([
      "--base-url",
      mock.url,
      "--api-key",
      "k",
      "--pending-order-id",
      "9223372036854775808",
    ]);
    assert.equal(badId.code, 2);
    assert.match(badId.stderr, /--pending-order-id must be an int64 integer/);
    // One order in two parts: the race would find the pending scenario's cancel done, a false failure.
    const shared = await cli([
      "--base-url",
      mock.url,
      "--api-key",
      MOCK_KEY,
      "--pending-order-id",
      "2",
      "--race-order-id",
      "02",
    ]);
    assert.equal(shared.code, 2, shared.stderr);
    assert.match(
      shared.stderr,
      /^error: --pending-order-id and --race-order-id \(or the ids the beforeRun hook gave\) name the same order \(2\): each part needs an order of its own/,
    );
    const badReporter = await cli(["--base-url", mock.url, "--api-key", "k", "--reporter", "xml"]);
    assert.equal(badReporter.code, 2);
    const closed = await startTarget();
    await closed.close();
    const unreachable = await cli(["--base-url", closed.url, "--api-key", "k"]);
    assert.equal(unreachable.code, 2);
    assert.match(
      unreachable.stderr,
      /^error: nothing accepts connections at 127\.0\.0\.1:\d+ \(ECONNREFUSED\): is the service running, and is --base-url right\?/,
    );
    assert.equal(unreachable.stderr.trim().split("\n").length, 1, "one line, no stack trace");
  });

  it("exits 2 with one line, and lists no check, when the target refuses the key", async () => {
    const refused = await cli(["--base-url", mock.url, "--api-key", "expired-key-0042"]);
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.match(
      refused.stderr,
      /^error: the target refused the API key: GET http:\/\/127\.0\.0\.1:\d+\/v1\/store\/orders with it was answered 401\. Check that --api-key \(or PETSTORE_API_KEY\)/,
    );
    assert.equal(refused.stderr.trim().split("\n").length, 1, "one line");
    assert.equal(refused.stdout, "", "no report of 401s as contract failures");
    assert.ok(!refused.stderr.includes("expired-key-0042"));
  });

  it("warns when the base URL does not end in /v1", async () => {
    // A deployment served at /api: it routes the API there, so the run judges it, with the warning.
    const upstream = await startScriptedUpstream(({ method, url }) =>
      method === "GET" && url === "/api/store/orders"
        ? json(200, "[]")
        : json(404, '{"code":"not_found","message":"no such order","status":404}'),
    );
    try {
      const result = await cli(["--base-url", upstream.url.replace(/\/v1$/, "/api"), "--api-key", "k"]);
      assert.match(result.stdout, /warning: the base URL .* does not end with \/v1/);
    } finally {
      await upstream.close();
    }
  });
});

describe("petstore-conformance: every end of a run writes the reports asked for", () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());

  const reportFlags = (folder: string) => [
    "--reporter",
    `junit:${join(folder, "run.xml")}`,
    "--reporter",
    `json:${join(folder, "run.json")}`,
    "--reporter",
    `html:${join(folder, "run.html")}`,
    "--reporter",
    `markdown:${join(folder, "run.md")}`,
  ];
  const readReports = (folder: string) => ({
    junit: new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(
      readFileSync(join(folder, "run.xml"), "utf8"),
    ).testsuites.testsuite,
    json: JSON.parse(readFileSync(join(folder, "run.json"), "utf8")) as Report & { outcome: RunOutcome },
    html: readFileSync(join(folder, "run.html"), "utf8"),
    markdown: readFileSync(join(folder, "run.md"), "utf8"),
  });

  /** Every report's headline says the run's end as its exit code does, and none says passed. */
  function assertHeadlines(folder: string, headline: "error" | "interrupted"): void {
    const { json, html, markdown } = readReports(folder);
    assert.equal(json.outcome.verdict, headline);
    assert.match(html, new RegExp(`<title>Conformance ${headline}:`));
    assert.match(html, new RegExp(`<h1>[^\n]*<span class="failed">${headline}</span></h1>`));
    assert.match(markdown, new RegExp(`^### Petstore Store Orders conformance: \\S+ ${headline}$`, "m"));
    for (const text of [html, markdown]) assert.doesNotMatch(text, /passed<\/span><\/h1>|✅ passed/);
  }

  /** Each report holds the run's one error: JUnit a test case with an <error>, JSON it and "nothing was judged", HTML it first. */
  function assertErrorReports(folder: string, line: RegExp): void {
    const { junit, json, html } = readReports(folder);
    const cases = [junit.testcase].flat() as Array<{ error?: { message: string } }>;
    assert.equal(Number(junit.errors), 1);
    assert.match(cases[0]?.error?.message ?? "", line);
    assert.equal(json.ended?.kind, "error");
    assert.match(json.ended?.message ?? "", line);
    assert.equal(json.ended?.judged, "nothing was judged");
    const body = html.slice(html.indexOf("<main>"));
    const alert = body.indexOf('role="alert"');
    assert.ok(alert !== -1 && alert < body.indexOf("<h1>"), "the error comes first");
    assert.match(body.slice(alert, body.indexOf("</p>", alert)), line);
    assertHeadlines(folder, "error");
    const { markdown } = readReports(folder);
    assert.doesNotMatch(markdown, /nothing was judged; nothing was judged/);
  }

  it("a refused key, an unreachable target, a failing hook and bad usage: exit 2 and every report", async () => {
    const refusedIn = tempFolder("conformance-ended-");
    const refused = await cli(["--base-url", mock.url, "--api-key", "wrong-key", ...reportFlags(refusedIn)]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(refused.stdout, "");
    assertErrorReports(refusedIn, /the target refused the API key/);

    const closed = await startTarget();
    await closed.close();
    const unreachableIn = tempFolder("conformance-ended-");
    const unreachable = await cli([
      "--base-url",
      closed.url,
      "--api-key",
      "k",
      ...reportFlags(unreachableIn),
    ]);
    assert.equal(unreachable.code, 2, unreachable.stderr);
    assertErrorReports(unreachableIn, /nothing accepts connections at 127\.0\.0\.1:\d+/);

    const hookIn = tempFolder("conformance-ended-");
    const hook = await cli([
      "--base-url",
      mock.url,
      "--api-key",
      MOCK_KEY,
      "--hooks",
      join(hookIn, "absent-hooks.mjs"),
      ...reportFlags(hookIn),
    ]);
    assert.equal(hook.code, 2, hook.stderr);
    assertErrorReports(hookIn, /cannot load the hooks/);

    const usageIn = tempFolder("conformance-ended-");
    const usage = await cli(["--api-key", "k", ...reportFlags(usageIn)], { PETSTORE_BASE_URL: "" });
    assert.equal(usage.code, 2, usage.stderr);
    assert.equal(usage.stderr.trim().split("\n").length, 1, "still one line");
    assertErrorReports(
      usageIn,
      /--base-url is required, and the environment variable PETSTORE_BASE_URL is empty/,
    );

    // A mistyped flag is found before the other options are read: the reports asked for still say it.
    const typoIn = tempFolder("conformance-ended-");
    const typo = await cli(["--base-url", mock.url, "--api-kye", "k", ...reportFlags(typoIn)]);
    assert.equal(typo.code, 2, typo.stderr);
    assertErrorReports(typoIn, /unknown option --api-kye: did you mean --api-key\?/);
  });

  it("a redirect at start whose Location echoes the credential: the one line and the reports hide it", async () => {
    const echoing = await startScriptedUpstream((request) => {
      const header = (name: string) =>
        request.rawHeaders[request.rawHeaders.findIndex((each) => each.toLowerCase() === name) + 1] ?? "";
      const location = `/login?k=${header("x-api-key")}&a=${encodeURIComponent(header("authorization"))}`;
      return { status: 302, headers: [["location", location]] };
    });
    const folder = tempFolder("conformance-redirect-");
    try {
      const suiteKey = "Suite-Key-Secret-4242";
      const suite = await cli(
        ["--base-url", echoing.url, "--api-key", suiteKey, ...reportFlags(folder)],
        NO_PROXY_ENV,
      );
      assert.equal(suite.code, 2, suite.stderr);
      assert.match(suite.stderr, /^error: the base address redirects \(302\) to /);
      const proxyKey = "Zk9-Secret-Probe-77";
      const proxy = await cli(
        [
          "proxy",
          "--upstream",
          echoing.url,
          "--port",
          "0",
          "--header",
          `X-Api-Key: ${proxyKey}`,
          "--reporter",
          `json:${join(folder, "proxy.json")}`,
        ],
        NO_PROXY_ENV,
      );
      assert.equal(proxy.code, 2, proxy.stderr);
      assert.match(proxy.stderr, /^error: the base address redirects \(302\) to /);
      const texts = [suite.stderr, suite.stdout, proxy.stderr, proxy.stdout];
      for (const file of ["run.xml", "run.json", "run.html", "run.md", "proxy.json"])
        texts.push(readFileSync(join(folder, file), "utf8"));
      for (const text of texts) {
        assert.ok(!text.includes(suiteKey), text);
        assert.ok(!text.includes(proxyKey), text);
      }
    } finally {
      await echoing.close();
    }
  });

  it("a JSON report to standard output holds the error", async () => {
    const result = await cli(["--base-url", mock.url, "--api-key", "wrong-key", "--reporter", "json"]);
    assert.equal(result.code, 2);
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.ended?.judged, "nothing was judged");
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal} mid-run writes what was judged so far, marked interrupted, and exits ${signal === "SIGINT" ? 130 : 143}`, async () => {
      // The mock in front, holding the pending order's cancel until the test ends: the run stops in phase 2.
      const held = new Set<ServerResponse>();
      let cancelReached: () => void = () => {};
      const reached = new Promise<void>((resolve) => {
        cancelReached = resolve;
      });
      const front = createServer((request, response) => {
        if (
          request.method === "DELETE" &&
          request.url?.endsWith(`/${MOCK_PENDING_ID}`) &&
          request.headers.authorization === `Bearer ${MOCK_KEY}`
        ) {
          held.add(response);
          cancelReached();
          return;
        }
        const upstream = httpRequest(
          new URL(request.url ?? "/", mock.url),
          { method: request.method, headers: request.headers },
          (answer) => {
            response.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(response);
          },
        );
        request.pipe(upstream);
      });
      await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
      const folder = tempFolder("conformance-interrupted-");
      try {
        const { port } = front.address() as AddressInfo;
        const child = spawn(
          process.execPath,
          [
            "--import",
            "tsx",
            fileURLToPath(new URL("../bin.ts", import.meta.url)),
            "--base-url",
            `http://127.0.0.1:${port}/v1`,
            "--api-key",
            MOCK_KEY,
            "--session",
            `interrupted-${signal}`,
            "--pending-order-id",
            MOCK_PENDING_ID,
            ...reportFlags(folder),
          ],
          { stdio: ["ignore", "pipe", "pipe"] },
        );
        let stderr = "";
        child.stderr.on("data", (chunk) => {
          stderr += chunk;
        });
        const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
        await reached;
        child.kill(signal);
        assert.equal(await exited, signal === "SIGINT" ? 130 : 143, stderr);
        const { junit, json, html } = readReports(folder);
        assert.equal(json.ended?.kind, "interrupted");
        assert.match(json.ended?.message ?? "", new RegExp(signal));
        const listed = json.scenarios.find((scenario) => scenario.id === "list-orders");
        assert.equal(listed?.status, "passed", "a scenario played before the stop is in the report");
        const cancel = json.scenarios.find((scenario) => scenario.id === "cancel-pending");
        assert.equal(cancel?.status, "skipped");
        assert.match(cancel?.reason ?? "", /interrupted/);
        assert.equal(Number(junit.errors), 1);
        assert.match(html, /interrupted/);
        assertHeadlines(folder, "interrupted");
      } finally {
        for (const response of held) response.destroy();
        front.closeAllConnections();
        await new Promise((resolve) => front.close(resolve));
      }
    });
  }
});
