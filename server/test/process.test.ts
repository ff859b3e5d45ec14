import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type MockProcess, runMainToExit, startMockProcess } from "../../test-support/spawn-mock.ts";
import { DEV_KEY, writeFixture } from "./support.ts";

const BIG_ID = "9007199254740993";

describe("the mock as a process (npm start)", () => {
  describe("on the bundled fixtures", () => {
    let mock: MockProcess;
    before(async () => {
      mock = await startMockProcess();
    });
    after(() => mock.stop());

    it("prints its URL with the chosen port and the documented dev key", () => {
      assert.match(mock.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      assert.doesNotMatch(mock.url, /:0\//);
      assert.match(mock.output(), /dev API key \(bundled fixtures\): dev-key-123/);
    });

    it("prints the start-up lines the README and the mock's page show, in their order", () => {
      const labels = (text: string) => [...text.matchAll(/^ {2}([a-zA-Z ()]+):/gm)].map((match) => match[1]);
      const printed = labels(mock.output());
      for (const page of ["README.md", "docs/mock-server.md"]) {
        const text = readFileSync(new URL(`../../${page}`, import.meta.url), "utf8");
        const sample = /```text\n(Petstore Store Orders mock listening on [^\n]*\n(?: {2}[^\n]*\n)+)/.exec(
          text,
        )?.[1];
        assert.ok(sample, `${page} shows no start-up lines`);
        assert.deepEqual(labels(sample), printed, page);
      }
    });

    it("serves, cancels and remembers over HTTP", async () => {
      const auth = { authorization: `Bearer ${DEV_KEY}` };
      const list = await fetch(`${mock.url}/store/orders`, { headers: auth });
      assert.equal(list.status, 200);
      assert.equal(list.headers.get("content-type"), "application/json; charset=utf-8");
      assert.match(await list.text(), new RegExp(`"id":${BIG_ID},`));
      const cancel = await fetch(`${mock.url}/store/orders/${BIG_ID}`, { method: "DELETE", headers: auth });
      assert.equal(cancel.status, 204);
      const again = await fetch(`${mock.url}/store/orders/${BIG_ID}`, { method: "DELETE", headers: auth });
      assert.equal(again.status, 409);
      assert.equal((await again.json()).code, "order_not_cancellable");
    });

    it("writes one structured log line per request without the key or the Authorization header", async () => {
      const logged = await startMockProcess();
      try {
        await fetch(`${logged.url}/store/orders?token=${DEV_KEY}`, {
          headers: { authorization: `Bearer ${DEV_KEY}` },
        });
        await fetch(`${logged.url}/store/orders`, { headers: { authorization: "Bearer wrong-secret-key" } });
        const requestLines = () =>
          logged
            .output()
            .split("\n")
            .filter((line) => line.includes('"msg":"request"'));
        for (let waited = 0; requestLines().length < 2 && waited < 5_000; waited += 50) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const requests = requestLines().map((line) => JSON.parse(line));
        assert.deepEqual(
          requests.map((entry) => [entry.method, entry.path, entry.status]),
          [
            ["GET", "/v1/store/orders", 200],
            ["GET", "/v1/store/orders", 401],
          ],
        );
        const logs = logged
          .output()
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .join("\n");
        assert.doesNotMatch(logs, /dev-key-123|wrong-secret-key|authorization/i);
        assert.deepEqual(
          logged.output().match(/^.*listening.*$/gim),
          [`Petstore Store Orders mock listening on ${logged.url}`],
          "the start-up is said once, by the start-up lines",
        );
      } finally {
        await logged.stop();
      }
    });

    it("logs reads of the control plane and health probes only at debug", async () => {
      for (const level of ["info", "debug"]) {
        const logged = await startMockProcess(["--log-level", level]);
        try {
          await (await fetch(`${logged.url.replace(/\/v1$/, "")}/__health`)).arrayBuffer();
          await (await fetch(`${logged.url.replace(/\/v1$/, "")}/__control/orders`)).arrayBuffer();
          await (
            await fetch(`${logged.url.replace(/\/v1$/, "")}/__control/reset`, { method: "POST" })
          ).arrayBuffer();
          await (await fetch(`${logged.url}/store/orders`)).arrayBuffer();
          const requestLines = () =>
            logged
              .output()
              .split("\n")
              .filter((line) => line.includes('"msg":"request"'))
              .map((line) => JSON.parse(line) as { method: string; path: string });
          // The API's request is the last one sent: once it is logged, every earlier line that will be is.
          for (
            let waited = 0;
            !requestLines().some((entry) => entry.path === "/v1/store/orders") && waited < 5_000;
            waited += 50
          )
            await new Promise((resolve) => setTimeout(resolve, 50));
          assert.deepEqual(
            requestLines().map((entry) => `${entry.method} ${entry.path}`),
            [
              ...(level === "debug" ? ["GET /__health", "GET /__control/orders"] : []),
              "POST /__control/reset",
              "GET /v1/store/orders",
            ],
            level,
          );
        } finally {
          await logged.stop();
        }
      }
    });

    it("shuts down gracefully on SIGTERM with exit code 0", async () => {
      const pending = Array.from({ length: 20 }, () =>
        fetch(`${mock.url}/store/orders`, { headers: { authorization: `Bearer ${DEV_KEY}` } }).then(
          (r) => r.status,
        ),
      );
      const statuses = await Promise.all(pending);
      assert.ok(statuses.every((status) => status === 200));
      assert.equal(await mock.stop("SIGTERM"), 0);
    });
  });

  describe("with its own fixtures and options", () => {
    it("serves ids above 2^53 from a custom file exactly and never prints its key", async () => {
      const path = writeFixture(
        `{"apiKeys":["team-secret-1"],"orders":[{"id":${BIG_ID},"petId":9223372036854775807,"status":"pending"},{"id":18014398509481985,"status":"shipped"}]}`,
      );
      const mock = await startMockProcess(["--fixtures", path]);
      try {
        assert.doesNotMatch(mock.output(), /team-secret-1|dev API key/);
        const auth = { authorization: "Bearer team-secret-1" };
        const body = await (await fetch(`${mock.url}/store/orders`, { headers: auth })).text();
        assert.equal(body, `[{"id":${BIG_ID},"petId":9223372036854775807},{"id":18014398509481985}]`);
        assert.equal(
          (await fetch(`${mock.url}/store/orders/9007199254740992`, { method: "DELETE", headers: auth }))
            .status,
          404,
        );
        assert.equal(
          (await fetch(`${mock.url}/store/orders/${BIG_ID}`, { method: "DELETE", headers: auth })).status,
          204,
        );
        assert.equal(
          (await fetch(`${mock.url}/store/orders/18014398509481985`, { method: "DELETE", headers: auth }))
            .status,
          409,
        );
      } finally {
        await mock.stop();
      }
    });

    it("replaces the fixture keys with --api-key and PETSTORE_API_KEYS, and prints neither", async () => {
      const viaFlag = await startMockProcess(["--api-key", "flag-key-1", "--api-key", "flag-key-2"]);
      const viaEnv = await startMockProcess([], { PETSTORE_API_KEYS: "env-key-1,env-key-2" });
      try {
        for (const [mock, keys] of [
          [viaFlag, ["flag-key-1", "flag-key-2"]],
          [viaEnv, ["env-key-1", "env-key-2"]],
        ] as const) {
          assert.doesNotMatch(mock.output(), /key-1|key-2|dev-key-123/);
          for (const key of [...keys, DEV_KEY]) {
            const response = await fetch(`${mock.url}/store/orders`, {
              headers: { authorization: `Bearer ${key}` },
            });
            assert.equal(response.status, key === DEV_KEY ? 401 : 200, key);
          }
        }
      } finally {
        await Promise.all([viaFlag.stop(), viaEnv.stop()]);
      }
    });

    it("takes the fixture file and port from the environment", async () => {
      const path = writeFixture({ apiKeys: ["k"], orders: [{ id: 77, status: "pending" }] });
      const mock = await startMockProcess([], { PETSTORE_FIXTURES: path });
      try {
        const body = await (
          await fetch(`${mock.url}/store/orders`, { headers: { authorization: "Bearer k" } })
        ).text();
        assert.equal(body, '[{"id":77}]');
      } finally {
        await mock.stop();
      }
    });

    it("says so when it is bound beyond loopback", async () => {
      const mock = await startMockProcess(["--host", "0.0.0.0", "--quiet"]);
      try {
        assert.match(mock.output(), /bound to 0\.0\.0\.0: reachable from other machines/);
      } finally {
        await mock.stop();
      }
    });

    it("never logs a key or an Authorization header, even at trace level", async () => {
      const path = writeFixture({ apiKeys: ["fixture-secret-7"], orders: [{ id: 1, status: "pending" }] });
      const mock = await startMockProcess(["--fixtures", path, "--log-level", "trace"]);
      try {
        for (const authorization of [
          "Bearer fixture-secret-7",
          "Bearer guessed-secret-9",
          "Basic Zml4dHVyZS1zZWNyZXQtNw==",
          "bearer fixture-secret-7",
        ]) {
          for (const [method, url] of [
            ["GET", `${mock.url}/store/orders`],
            ["DELETE", `${mock.url}/store/orders/1`],
            ["DELETE", `${mock.url}/store/orders/abc`],
            ["POST", `${mock.url}/store/orders`],
          ]) {
            const response = await fetch(url as string, { method, headers: { authorization } });
            assert.doesNotMatch(await response.text(), /secret|Zml4/, "no key in a response");
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        const output = mock.output();
        assert.ok(
          output.split("\n").filter((line) => line.includes('"msg":"request"')).length >= 16,
          "the requests were logged",
        );
        assert.doesNotMatch(
          output,
          /fixture-secret-7|guessed-secret-9|Zml4dHVyZS1zZWNyZXQtNw|authorization/i,
        );
      } finally {
        await mock.stop();
      }
    });

    it("logs nothing per request with --quiet", async () => {
      const mock = await startMockProcess(["--quiet"]);
      try {
        await fetch(`${mock.url}/store/orders`, { headers: { authorization: `Bearer ${DEV_KEY}` } });
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.doesNotMatch(mock.output(), /"msg":"request"/);
      } finally {
        await mock.stop();
      }
    });
  });

  describe("refusing to start", () => {
    const bad: Array<[string, string, RegExp]> = [
      ["bad JSON", "{ nope", /not valid JSON/],
      [
        "an unknown status",
        '{"apiKeys":["k"],"orders":[{"id":1,"status":"lost"}]}',
        /orders\[0\] \(id 1\), field "status": unknown status "lost"/,
      ],
      [
        "a duplicate id",
        '{"apiKeys":["k"],"orders":[{"id":1,"status":"pending"},{"id":1,"status":"shipped"}]}',
        /orders\[1\] \(id 1\), field "id": duplicate id/,
      ],
      [
        "an id outside int64",
        '{"apiKeys":["k"],"orders":[{"id":9223372036854775808,"status":"pending"}]}',
        /orders\[0\] \(id 9223372036854775808\), field "id": must match format "int64"/,
      ],
      [
        "a bad date-time",
        '{"apiKeys":["k"],"orders":[{"id":1,"shipDate":"2026-13-45","status":"pending"}]}',
        /orders\[0\] \(id 1\), field "shipDate": must match format "date-time"/,
      ],
      [
        "a wrong type",
        '{"apiKeys":["k"],"orders":[{"id":1,"complete":1,"status":"pending"}]}',
        /orders\[0\] \(id 1\), field "complete": must be boolean/,
      ],
      ["no API key", '{"orders":[{"id":1,"status":"pending"}]}', /field "apiKeys": no API key/],
    ];
    for (const [name, content, message] of bad) {
      it(`exits 1 before listening on ${name}, naming the file`, async () => {
        const path = writeFixture(content);
        const result = await runMainToExit(["--port", "0", "--fixtures", path]);
        assert.equal(result.code, 1);
        assert.match(result.stderr, message);
        assert.ok(result.stderr.includes(path), result.stderr);
        assert.doesNotMatch(result.stdout, /listening/);
        assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
      });
    }

    it("exits 1 on a missing fixture file", async () => {
      const result = await runMainToExit(["--fixtures", "/nonexistent/world.json"]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /\/nonexistent\/world\.json: cannot read the fixture file/);
    });

    it("exits 2 with one line on a bad option", async () => {
      for (const args of [["--port", "http"], ["--port", "70000"], ["--frobnicate"], ["--"]]) {
        const result = await runMainToExit(args);
        assert.equal(result.code, 2, args.join(" "));
        assert.match(result.stderr, /^error: [^\n]+ \(see petstore-mock --help\)\n$/);
      }
    });

    it("prints help with --help", async () => {
      const result = await runMainToExit(["--help"]);
      assert.equal(result.code, 0);
      for (const flag of [
        "--port",
        "--host",
        "--fixtures",
        "--api-key",
        "--cors-origin",
        "--quiet",
        "PETSTORE_API_KEYS",
      ]) {
        assert.ok(result.stdout.includes(flag), flag);
      }
      // A project's ./fixtures/orders.json is not what serves when --fixtures is not given.
      assert.match(result.stdout, /default: the package's own\n.*bundled fixtures\/orders\.json\)\n/);
      assert.doesNotMatch(result.stdout, /default fixtures\/orders\.json/);
    });
  });
});
