import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createProxy } from "proxy";
import { generate } from "selfsigned";
import { tempFolder } from "../../common/temp-folder.ts";
import { freePort } from "../../test-support/free-port.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import { PENDING_ID, SHIPPED_ID, TARGET_KEY, withTarget } from "../../test-support/target-server.ts";
import type { Report } from "../reports/report.ts";
import { SETTING_FLAGS } from "../suite/options.ts";
import { runConformance } from "../suite/runner.ts";
import { runProblem } from "../target/run-problems.ts";
import { MOCK_KEY } from "./mock-ids.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";

const IDS = ["--pending-order-id", PENDING_ID, "--shipped-order-id", SHIPPED_ID];
const MOCK_CONTROL_HOOK = "mock-control";
const folder = tempFolder("conformance-deployments-");
const file = (name: string, content: string) => {
  const path = join(folder, name);
  writeFileSync(path, content);
  return path;
};

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function failedIds(report: Report): string[] {
  return report.scenarios.flatMap((s) => s.checks.filter((c) => c.status === "failed").map((c) => c.id));
}

describe("the suite against HTTPS deployments", () => {
  let certificate: { cert: string; private: string; clientcert?: string; clientprivate?: string };
  before(async () => {
    certificate = (await generate([{ name: "commonName", value: "petstore test CA" }], {
      keySize: 2048,
      algorithm: "sha256",
      clientCertificate: { cn: "conformance client" },
      extensions: [
        { name: "basicConstraints", cA: true },
        { name: "keyUsage", keyCertSign: true, digitalSignature: true, keyEncipherment: true },
        { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] },
      ],
    })) as typeof certificate;
  });
  const tls = () => ({ key: certificate.private, cert: certificate.cert });

  it("an untrusted certificate is an error of the run: exit 2 and the option that fixes it", async () => {
    await withTarget({ tls: tls() }, async (url) => {
      const result = await cli(["--base-url", url, ...IDS], {
        PETSTORE_API_KEY: TARGET_KEY,
        ...NO_PROXY_ENV,
      });
      assert.equal(result.code, 2, result.stdout);
      assert.equal(result.stdout, "", "no scenario is judged");
      assert.match(
        result.stderr,
        /^error: the certificate of 127\.0\.0\.1:\d+ is not trusted \(\w+\): pass --ca-file/,
      );
      assert.equal(result.stderr.trim().split("\n").length, 1, "one line");
    });
  });

  it("--ca-file trusts the company CA and every scenario passes", async () => {
    const ca = file("ca.pem", certificate.cert);
    await withTarget({ tls: tls() }, async (url) => {
      const result = await cli(["--base-url", url, ...IDS, "--ca-file", ca, "--reporter", "json"], {
        PETSTORE_API_KEY: TARGET_KEY,
        ...NO_PROXY_ENV,
      });
      assert.equal(result.code, 0, result.stderr);
      const report = JSON.parse(result.stdout) as Report;
      assert.deepEqual(failedIds(report), []);
      assert.deepEqual(report.warnings, []);
    });
  });

  it("--insecure passes too, and every report format says certificates were not checked", async () => {
    await withTarget({ tls: tls() }, async (url) => {
      const reports = Object.fromEntries(
        ["json", "junit", "html", "markdown"].map((name) => [name, join(folder, `insecure.${name}`)]),
      );
      const result = await cli(
        [
          "--base-url",
          url,
          ...IDS,
          "--insecure",
          ...Object.entries(reports).flatMap(([name, path]) => ["--reporter", `${name}:${path}`]),
        ],
        { PETSTORE_API_KEY: TARGET_KEY, ...NO_PROXY_ENV },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /warning: certificates were not checked \(--insecure\)/);
      for (const [name, path] of Object.entries(reports)) {
        assert.match(readFileSync(path, "utf8"), /certificates were not checked \(--insecure\)/, name);
      }
    });
  });

  it("a gateway that wants a client certificate: exit 2 without one, every scenario passing with --cert/--key", async () => {
    const ca = file("client-ca.pem", certificate.cert);
    await withTarget({ tls: { ...tls(), ca: certificate.cert } }, async (url) => {
      const without = await cli(["--base-url", url, ...IDS, "--ca-file", ca], {
        PETSTORE_API_KEY: TARGET_KEY,
        ...NO_PROXY_ENV,
      });
      assert.equal(without.code, 2, without.stdout);
      assert.match(without.stderr, /^error: /);
      const cert = file("client.pem", certificate.clientcert as string);
      const key = file("client-key.pem", certificate.clientprivate as string);
      const withCert = await cli(
        ["--base-url", url, ...IDS, "--ca-file", ca, "--cert", cert, "--key", key, "--reporter", "json"],
        {
          PETSTORE_API_KEY: TARGET_KEY,
          ...NO_PROXY_ENV,
        },
      );
      assert.equal(withCert.code, 0, withCert.stderr);
      assert.deepEqual(failedIds(JSON.parse(withCert.stdout) as Report), []);
    });
  });
});

describe("the suite through proxies and gateways", () => {
  let proxy: Server;
  let proxyUrl: string;
  const proxied: string[] = [];
  before(async () => {
    proxy = createProxy(createServer());
    proxy.on("request", (request: IncomingMessage) => proxied.push(`${request.method} ${request.url}`));
    proxy.on("connect", (request: IncomingMessage) => proxied.push(`CONNECT ${request.url}`));
    proxyUrl = await listen(proxy);
  });
  after(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  it("goes through the proxy that http_proxy names, and not through HTTP_PROXY", async () => {
    await withTarget({}, async (url) => {
      proxied.length = 0;
      const report = await runConformance({
        baseUrl: url,
        apiKey: TARGET_KEY,
        pendingOrderId: PENDING_ID,
        shippedOrderId: SHIPPED_ID,
        env: { http_proxy: proxyUrl },
      });
      assert.deepEqual(failedIds(report), []);
      assert.equal(proxied.length, report.requests, "every request went through the proxy");
      assert.ok(proxied.every((line) => line.includes(new URL(url).host)));

      proxied.length = 0;
      const upper = await runConformance({ baseUrl: url, apiKey: TARGET_KEY, env: { HTTP_PROXY: proxyUrl } });
      assert.equal(proxied.length, 0, "HTTP_PROXY is ignored, as curl ignores it");
      assert.match(upper.warnings.join("\n"), /HTTP_PROXY is set and ignored/);
    });
  });

  it("tunnels HTTPS through the proxy with CONNECT, and NO_PROXY bypasses it", async () => {
    const pems = (await generate([{ name: "commonName", value: "127.0.0.1" }], {
      keySize: 2048,
      algorithm: "sha256",
      extensions: [{ name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] }],
    })) as { cert: string; private: string };
    await withTarget({ tls: { key: pems.private, cert: pems.cert } }, async (url) => {
      const tls = { ca: [pems.cert] };
      proxied.length = 0;
      const report = await runConformance({
        baseUrl: url,
        apiKey: TARGET_KEY,
        tls,
        env: { HTTPS_PROXY: proxyUrl },
      });
      assert.deepEqual(failedIds(report), []);
      assert.ok(
        proxied.length > 0 && proxied.every((line) => line.startsWith(`CONNECT ${new URL(url).host}`)),
      );

      proxied.length = 0;
      const bypass = await runConformance({
        baseUrl: url,
        apiKey: TARGET_KEY,
        tls,
        env: { https_proxy: proxyUrl, NO_PROXY: "localhost,127.0.0.1" },
      });
      assert.deepEqual(failedIds(bypass), []);
      assert.equal(proxied.length, 0, "NO_PROXY sends it straight there");
    });
  });

  it("a proxy that refuses the tunnel, or is not there, is an error of the run naming the proxy", async () => {
    const refusing = createServer();
    refusing.on("connect", (_request: IncomingMessage, socket: Socket) => {
      socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
    });
    const refusingUrl = await listen(refusing);
    try {
      const result = await cli(["--base-url", "https://127.0.0.1:9/v1", "--proxy", refusingUrl], {
        PETSTORE_API_KEY: TARGET_KEY,
        ...NO_PROXY_ENV,
      });
      assert.equal(result.code, 2);
      assert.equal(
        result.stderr.trim(),
        `error: the proxy ${refusingUrl} (from --proxy) refused the tunnel to 127.0.0.1:9 with 403: check its address and credentials, or list 127.0.0.1 in NO_PROXY`,
      );
    } finally {
      refusing.close();
    }
    const gone = await cli(["--base-url", "http://127.0.0.1:9/v1"], {
      PETSTORE_API_KEY: TARGET_KEY,
      ...NO_PROXY_ENV,
      http_proxy: "http://user:secret@127.0.0.1:9",
    });
    assert.equal(gone.code, 2);
    assert.match(
      gone.stderr,
      /^error: the proxy http:\/\/\*\*\*@127\.0\.0\.1:9 \(from http_proxy\) refused the connection/,
    );
    assert.doesNotMatch(gone.stderr, /secret/);
  });

  it("sends a gateway's header with --header, masked in every report unless --show-header names it", async () => {
    const gate = { name: "X-Gateway-Key", value: "gateway-secret-value" };
    await withTarget({ requireHeader: gate }, async (url) => {
      const without = await runConformance({ baseUrl: url, apiKey: TARGET_KEY });
      assert.ok(failedIds(without).length > 10, "the gateway refuses the run without its header");
      const reports = Object.fromEntries(
        ["json", "junit", "html", "markdown"].map((name) => [name, join(folder, `gate.${name}`)]),
      );
      const result = await cli(
        [
          "--base-url",
          url,
          ...IDS,
          "--header",
          `${gate.name}: ${gate.value}`,
          "--header",
          "X-Trace: visible-trace",
          "--show-header",
          "x-trace",
          ...Object.entries(reports).flatMap(([name, path]) => ["--reporter", `${name}:${path}`]),
        ],
        { PETSTORE_API_KEY: TARGET_KEY, ...NO_PROXY_ENV },
      );
      assert.equal(result.code, 0, result.stdout);
      const everything = [
        result.stdout,
        result.stderr,
        ...Object.values(reports).map((path) => readFileSync(path, "utf8")),
      ].join("\n");
      assert.doesNotMatch(everything, /gateway-secret-value/);
      assert.doesNotMatch(everything, new RegExp(TARGET_KEY));
    });
    // The evidence of a failure shows the header, masked, and the header named by --show-header as it is.
    await withTarget({ requireHeader: gate, shippedCancellable: true }, async (url) => {
      const report = await runConformance({
        baseUrl: url,
        apiKey: TARGET_KEY,
        shippedOrderId: SHIPPED_ID,
        headers: { [gate.name]: gate.value, "X-Trace": "visible-trace" },
        showHeaders: ["x-trace"],
      });
      const evidence = report.scenarios.flatMap((s) => s.checks).find((c) => c.status === "failed")?.request;
      assert.equal(evidence?.headers[gate.name], "***");
      assert.equal(evidence?.headers["X-Trace"], "visible-trace");
    });
  });

  it("a redirecting base address is an error of the run that names the Location", async () => {
    const redirecting = createServer((request, response) => {
      response.writeHead(301, { location: `https://staging.example.test${request.url}` }).end();
    });
    const url = await listen(redirecting);
    try {
      const result = await cli(["--base-url", `${url}/v1`], {
        PETSTORE_API_KEY: TARGET_KEY,
        ...NO_PROXY_ENV,
      });
      assert.equal(result.code, 2);
      assert.equal(
        result.stderr.trim(),
        "error: the base address redirects (301) to https://staging.example.test/v1/store/orders: use --base-url https://staging.example.test/v1",
      );
    } finally {
      redirecting.close();
    }
  });

  it("names the hint for a refused connection and an unknown host", () => {
    const target = new URL("https://staging.example.test/v1");
    const exchange = (errorCode: string) => ({
      request: { method: "GET", path: "/v1/store/orders", headers: {} },
      errorCode,
      error: errorCode,
    });
    assert.match(
      runProblem(exchange("ENOTFOUND"), target, {}, SETTING_FLAGS) ?? "",
      /the name staging\.example\.test does not resolve/,
    );
    assert.match(
      runProblem(exchange("ECONNREFUSED"), target, {}, SETTING_FLAGS) ?? "",
      /nothing accepts connections at staging\.example\.test/,
    );
    assert.match(
      runProblem(exchange("ERR_TLS_CERT_ALTNAME_INVALID"), target, {}, SETTING_FLAGS) ?? "",
      /not issued for that name/,
    );
  });
});

describe("the suite's pace", () => {
  it("waits out 429 with Retry-After, retries, and counts the retries", async () => {
    await withTarget({ rateLimited: { times: 2, retryAfter: "0" } }, async (url) => {
      let exchanges = 0;
      const report = await runConformance({
        baseUrl: url,
        apiKey: TARGET_KEY,
        pendingOrderId: PENDING_ID,
        shippedOrderId: SHIPPED_ID,
        onExchange: () => {
          exchanges++;
        },
      });
      assert.deepEqual(failedIds(report), []);
      assert.ok(report.retries >= 2, `${report.retries} retries`);
      assert.equal(report.requests, exchanges + report.retries, "every retry was a request of its own");
    });
  });

  it("a 429 that never clears fails as an undocumented status, saying so", async () => {
    await withTarget({ rateLimited: { times: 1000, retryAfter: "120" } }, async (url) => {
      const report = await runConformance({
        baseUrl: url,
        apiKey: TARGET_KEY,
        maxRetries: 2,
        maxRetryWaitMs: 5,
        only: ["list-orders"],
      });
      const status = report.scenarios[0]?.checks.find((check) => check.id === "list-orders.list.status");
      assert.equal(status?.status, "failed");
      assert.match(status?.message ?? "", /kept answering 429 Too Many Requests after 2 retries/);
      assert.equal(report.retries, 2 * 2, "the first list (the scenario's too) and the one after the phases");
    });
  });

  it("--concurrency bounds the requests in flight at the target", async () => {
    for (const [concurrency, check] of [
      [undefined, (most: number) => most > 1],
      [1, (most: number) => most === 1],
      [3, (most: number) => most > 1 && most <= 3],
    ] as const) {
      const inFlight = { now: 0, most: 0 };
      await withTarget({ inFlight }, async (url) => {
        const report = await runConformance({
          baseUrl: url,
          apiKey: TARGET_KEY,
          ...(concurrency !== undefined ? { concurrency } : {}),
        });
        assert.deepEqual(failedIds(report), []);
      });
      assert.ok(check(inFlight.most), `concurrency ${concurrency}: at most ${inFlight.most} in flight`);
    }
  });
});

describe("provisioning hooks", () => {
  it("takes the ids a beforeRun hook provides, and options win over them", async () => {
    const hooks = file(
      "ids.mjs",
      `export async function beforeRun(context) {
        if (!context.baseUrl.endsWith("/v1") || typeof context.fetch !== "function") throw new Error("bad context");
        return { pendingOrderId: "${PENDING_ID}", shippedOrderId: "424242", raceOrderId: "1" };
      }
      export async function afterRun(context, report) { globalThis.afterRunSaw = report.summary; }`,
    );
    await withTarget({}, async (url) => {
      const report = await runConformance({
        baseUrl: url,
        apiKey: TARGET_KEY,
        hooks,
        shippedOrderId: SHIPPED_ID,
      });
      assert.deepEqual(failedIds(report), []);
      assert.equal(report.summary.skipped, 0, "the pending scenario ran with the hook's id");
      assert.deepEqual((globalThis as { afterRunSaw?: unknown }).afterRunSaw, report.summary);
    });
  });

  it("a hook that throws ends the run with exit 2 and its message, secrets hidden", async () => {
    const hooks = file(
      "throws.mjs",
      `export function beforeRun(context) { throw new Error("no staging database for key " + context.apiKey); }`,
    );
    const result = await cli(["--base-url", "http://127.0.0.1:9/v1", "--hooks", hooks], {
      PETSTORE_API_KEY: TARGET_KEY,
      ...NO_PROXY_ENV,
    });
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim(), "error: the beforeRun hook failed: no staging database for key ***");
  });

  it("the mock-control hook before the mock is started: the run's own one line, naming the address", async () => {
    const port = await freePort();
    const result = await cli(
      ["--base-url", `http://127.0.0.1:${port}/v1`, "--hooks", MOCK_CONTROL_HOOK, "--session", "ci-1"],
      { PETSTORE_API_KEY: MOCK_KEY, ...NO_PROXY_ENV },
    );
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      `error: the beforeRun hook failed: nothing accepts connections at 127.0.0.1:${port} (ECONNREFUSED): is the service running, and is --base-url right?\n`,
    );
  });

  describe("the shipped mock-control hook with --session, against the real mock", () => {
    let mock: MockProcess;
    before(async () => {
      mock = await startMockProcess(["--quiet"]);
    });
    after(() => mock.stop());

    it("exercises every scenario, run after run, without a restart", async () => {
      for (const session of ["hook-run-1", "hook-run-1-again", "hook-run-2"]) {
        const result = await cli(
          ["--base-url", mock.url, "--hooks", MOCK_CONTROL_HOOK, "--session", session, "--reporter", "json"],
          { PETSTORE_API_KEY: MOCK_KEY, ...NO_PROXY_ENV },
        );
        assert.equal(result.code, 0, result.stderr + result.stdout.slice(0, 2000));
        const report = JSON.parse(result.stdout) as Report;
        assert.deepEqual(failedIds(report), []);
        assert.equal(report.summary.skipped, 0, `${session}: every scenario ran`);
      }
    });

    it("without --session, leaves the default world as it found it, in a session it names", async () => {
      const defaultWorld = async () => {
        const response = await fetch(`${mock.url}/store/orders`, {
          headers: { authorization: `Bearer ${MOCK_KEY}` },
        });
        return response.text();
      };
      const before = await defaultWorld();
      const sessions: string[] = [];
      for (let run = 0; run < 2; run++) {
        const result = await cli(
          ["--base-url", mock.url, "--hooks", MOCK_CONTROL_HOOK, "--reporter", "json"],
          {
            PETSTORE_API_KEY: MOCK_KEY,
            ...NO_PROXY_ENV,
          },
        );
        assert.equal(result.code, 0, result.stderr + result.stdout.slice(0, 2000));
        const report = JSON.parse(result.stdout) as Report;
        assert.equal(report.summary.skipped, 0, "every scenario ran");
        const named = report.warnings.map(
          (warning) => /a session of the mock's own, (\S+),/.exec(warning)?.[1],
        );
        sessions.push(named.find((name) => name !== undefined) ?? "");
      }
      assert.equal(await defaultWorld(), before, "the default world holds what it held, byte for byte");
      assert.ok(
        sessions.every((session) => session.length > 0) && sessions[0] !== sessions[1],
        String(sessions),
      );
    });
  });

  it("the mock-control hook against a mock whose control API needs a token it lacks: one line, exit 2", async () => {
    const guarded = await startMockProcess(["--quiet", "--control-token", "control-secret-1"]);
    try {
      const run = (token: Record<string, string>) =>
        cli(
          [
            "--base-url",
            guarded.url,
            "--hooks",
            MOCK_CONTROL_HOOK,
            "--session",
            "guarded",
            "--reporter",
            "json",
          ],
          {
            PETSTORE_API_KEY: MOCK_KEY,
            ...NO_PROXY_ENV,
            ...token,
          },
        );
      const refused = await run({});
      assert.equal(refused.code, 2);
      assert.equal(
        refused.stderr.trim(),
        "error: the beforeRun hook failed: 401 unauthorized: The control API needs the control token: send Authorization: Bearer <TOKEN>.",
      );
      const allowed = await run({ PETSTORE_CONTROL_TOKEN: "control-secret-1" });
      assert.equal(allowed.code, 0, allowed.stderr);
    } finally {
      await guarded.stop();
    }
  });
});

describe("choosing what runs", () => {
  it("--list prints every scenario with what it needs and whether it changes state", async () => {
    const result = await cli(["--list"]);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^cancel-pending\n {2}.+\n {2}needs --pending-order-id; changes state/m);
    assert.match(result.stdout, /^list-orders\n {2}.+\n {2}needs no order id; changes nothing/m);
  });

  it("--only and --skip run a subset; the rest is reported as skipped with the reason", async () => {
    await withTarget({}, async (url) => {
      const only = await runConformance({
        baseUrl: url,
        apiKey: TARGET_KEY,
        only: ["list-orders", "cancel-not-found"],
      });
      assert.deepEqual(
        only.scenarios.filter((s) => s.status !== "skipped").map((s) => s.id),
        ["list-orders", "cancel-not-found"],
      );
      assert.match(
        only.scenarios.find((s) => s.id === "list-unauthorized")?.reason ?? "",
        /not selected \(only /,
      );
      const skip = await runConformance({ baseUrl: url, apiKey: TARGET_KEY, skip: ["cancel-malformed-id"] });
      assert.equal(skip.scenarios.find((s) => s.id === "cancel-malformed-id")?.reason, "skipped with skip");
    });
    const unknown = await cli(
      ["--base-url", "http://127.0.0.1:9/v1", "--only", "list-orders,nope,also-nope"],
      {
        PETSTORE_API_KEY: TARGET_KEY,
      },
    );
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--only names no scenario nope, also-nope/);
  });
});

describe("reports people read", () => {
  it("a target that answers only 500 pages is judged, and the report's first line says it looks down", async () => {
    // A 502, 503 or 504 to the first list stops the run instead (cli.test.ts): a gateway with nothing behind it.
    await withTarget({ down: 500 }, async (url) => {
      const result = await cli(
        ["--base-url", url, "--reporter", "pretty", "--reporter", `markdown:${join(folder, "down.md")}`],
        {
          PETSTORE_API_KEY: TARGET_KEY,
          ...NO_PROXY_ENV,
        },
      );
      assert.equal(result.code, 1);
      assert.match(
        result.stdout.split("\n")[0] ?? "",
        /^warning: the target looks down: all \d+ answers were 5xx or not JSON/,
      );
      assert.match(
        readFileSync(join(folder, "down.md"), "utf8").split("\n")[1] ?? "",
        /^> \*\*the target looks down/,
      );
    });
  });

  it("markdown: a summary and a table of failed checks that parses back", async () => {
    await withTarget({ shippedCancellable: true }, async (url) => {
      const result = await cli(["--base-url", url, ...IDS, "--reporter", "markdown"], {
        PETSTORE_API_KEY: TARGET_KEY,
        ...NO_PROXY_ENV,
      });
      assert.equal(result.code, 1);
      const lines = result.stdout.split("\n");
      // A blank line first: appended after another report, this one starts a block of its own.
      assert.equal(lines[0], "");
      assert.match(lines[1] ?? "", /^### Petstore Store Orders conformance: ❌ \d+ failed$/);
      const header = lines.findIndex((line) => line.startsWith("| Scenario |"));
      assert.ok(header > 0);
      const rows = lines
        .slice(header + 2)
        .filter((line) => line.startsWith("|"))
        .map((line) =>
          line
            .slice(1, -1)
            .split(/(?<!\\)\|/)
            .map((cell) => cell.trim()),
        );
      assert.ok(
        rows.every((row) => row.length === 5),
        "five cells a row, pipes escaped",
      );
      assert.deepEqual(
        rows.map((row) => row[1]),
        ["`cancel-shipped.cancel.status`"],
      );
      assert.match(rows[0]?.[2] ?? "", /expected 409, got 204/);
      assert.match(rows[0]?.[3] ?? "", /^`DELETE \/v1\/store\/orders\/2`$/);
    });
  });
});
