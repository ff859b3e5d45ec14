import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, watch } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { capturedOutput } from "../../test-support/spawn-mock.ts";
import { PENDING_ID, SHIPPED_ID, TARGET_KEY, withTarget } from "../../test-support/target-server.ts";

// The CI gate as the installed package runs it: both commands wrapped around a COMMAND, the proxy stopped by
// signals to its process group, reports read while they are written, and a deployment the suite must not harm.

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command of the consumer project's node_modules/.bin, in a process group of its own, as CI starts it. */
function startBin(
  project: string,
  bin: string,
  args: string[],
): { child: ChildProcess; finished: Promise<Finished>; stdout: () => string; stderr: () => string } {
  const child = spawn(join(project, "node_modules/.bin", bin), args, {
    cwd: project,
    env: { ...process.env, NODE_OPTIONS: "", NO_COLOR: "1", PORT: "", HOST: "", PETSTORE_FIXTURES: "" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output = capturedOutput(child);
  // The last output may still be in the pipes at "exit"; "close" alone would wait for ever on a
  // process left holding them, which the tests must see as a failure, not a hang.
  const closed = once(child, "close");
  const finished = once(child, "exit").then(async ([code]) => {
    await Promise.race([closed, sleep(2000)]);
    return { code: code as number | null, stdout: output.stdout(), stderr: output.stderr() };
  });
  return { child, finished, ...output };
}

const runBin = (project: string, bin: string, args: string[]) => startBin(project, bin, args).finished;

/** `proxy --upstream URL --port 0` and the rest of its options. */
const proxyOn = (upstream: string, ...options: string[]) => [
  "proxy",
  "--upstream",
  upstream,
  "--port",
  "0",
  ...options,
];

/** A COMMAND reading the list through the address the wrapper gives it, then ending with `code`. */
function readList(variable: string, key: string, code: number | "SIGTERM"): string[] {
  const end = code === "SIGTERM" ? `process.kill(process.pid, "SIGTERM")` : `process.exitCode = ${code}`;
  const script = `fetch(process.env.${variable} + "/store/orders", { headers: { authorization: "Bearer ${key}" } })
    .then((r) => r.text().then(() => console.log(r.status)), (e) => console.log(e.message)).then(() => { ${end}; });`;
  return [process.execPath, "-e", script];
}

/** Whether every process of the group has exited, waiting up to 5 s. */
async function groupGone(child: ChildProcess): Promise<boolean> {
  for (let waited = 0; waited < 5_000; waited += 50) {
    try {
      process.kill(-(child.pid as number), 0);
    } catch {
      return true;
    }
    await sleep(50);
  }
  return false;
}

function assertWholeReports(folder: string): void {
  const report = JSON.parse(readFileSync(join(folder, "proxy.json"), "utf8")) as {
    traffic?: { judged: number };
  };
  assert.ok((report.traffic?.judged ?? 0) > 0);
  assert.match(readFileSync(join(folder, "proxy.xml"), "utf8"), /<\/testsuites>\s*$/);
  assert.ok(
    (JSON.parse(readFileSync(join(folder, "proxy.har"), "utf8")) as { log: { entries: unknown[] } }).log,
  );
}

/** Registers the tests; `project` is the consumer project with the package installed, once it is. */
export function ciGateTests(project: () => string): void {
  it("petstore-mock -- COMMAND: COMMAND's exit code, passing, failing or killed by a signal; nothing left running", async () => {
    const passing = await runBin(project(), "petstore-mock", [
      "--port",
      "0",
      "--",
      ...readList("PETSTORE_MOCK_URL", "dev-key-123", 0),
    ]);
    assert.equal(passing.code, 0, passing.stderr);
    assert.equal(passing.stdout, "200\n");
    const failing = await runBin(project(), "petstore-mock", [
      "--port",
      "0",
      "--",
      ...readList("PETSTORE_MOCK_URL", "dev-key-123", 3),
    ]);
    assert.equal(failing.code, 3);
    const killed = await runBin(project(), "petstore-mock", [
      "--port",
      "0",
      "--",
      ...readList("PETSTORE_MOCK_URL", "dev-key-123", "SIGTERM"),
    ]);
    assert.equal(killed.code, 143);

    // SIGTERM to the wrapper's whole group, as a CI runner cancelling the job sends it.
    const wrapper = startBin(project(), "petstore-mock", [
      "--port",
      "0",
      "--",
      process.execPath,
      "-e",
      `console.log(process.env.PETSTORE_MOCK_URL); setInterval(() => {}, 1000);`,
    ]);
    // COMMAND's own line says it runs, so the signal meets both the wrapper and COMMAND.
    while (!wrapper.stdout().includes("\n")) await sleep(20);
    process.kill(-(wrapper.child.pid as number), "SIGTERM");
    const stopped = await wrapper.finished;
    assert.equal(stopped.code, 143, stopped.stderr);
    assert.ok(await groupGone(wrapper.child), "a process of the wrapper's group is still running");
    await assert.rejects(fetch(`${stopped.stdout.trim()}/store/orders`), /fetch failed/);
  });

  it("petstore-conformance proxy -- COMMAND: COMMAND's failure first, else the gate; a broken upstream fails it", async () => {
    await withTarget({}, async (upstream) => {
      const args = (code: number | "SIGTERM") => [
        ...proxyOn(upstream, "--fail-on-violation", "--reporter", "json", "--"),
        ...readList("PETSTORE_PROXY_URL", TARGET_KEY, code),
      ];
      const passing = await runBin(project(), "petstore-conformance", args(0));
      assert.equal(passing.code, 0, passing.stderr);
      assert.match(passing.stdout, /^200\n\{/);
      assert.equal((await runBin(project(), "petstore-conformance", args(4))).code, 4);
      assert.equal((await runBin(project(), "petstore-conformance", args("SIGTERM"))).code, 143);
    });
    // A gateway whose service is down: every answer a 503 page.
    const broken = createServer((_request, response) => {
      response.writeHead(503, { "content-type": "text/html" }).end("<h1>503 Service Unavailable</h1>");
    }).listen(0, "127.0.0.1");
    await once(broken, "listening");
    try {
      const { port } = broken.address() as AddressInfo;
      const result = await runBin(project(), "petstore-conformance", [
        ...proxyOn(`http://127.0.0.1:${port}/v1`, "--fail-on-violation", "--reporter", "json", "--"),
        ...readList("PETSTORE_PROXY_URL", TARGET_KEY, 0),
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stdout, /^503\n/);
      assert.match(result.stdout, /"failed": [1-9]/);
    } finally {
      broken.close();
    }
  });

  for (const signals of [1, 2, 3]) {
    it(`a backgrounded proxy stopped by ${signals} SIGTERM to its process group writes whole reports and exits 0`, async () => {
      await withTarget({}, async (upstream) => {
        const folder = mkdtempSync(join(project(), "signals-"));
        const proxy = startBin(project(), "petstore-conformance", [
          ...proxyOn(upstream, "--fail-on-violation"),
          "--reporter",
          `json:${join(folder, "proxy.json")}`,
          "--reporter",
          `junit:${join(folder, "proxy.xml")}`,
          "--har",
          join(folder, "proxy.har"),
        ]);
        while (!/listening on (http:\/\/\S+),/.test(proxy.stderr())) await sleep(20);
        const url = /listening on (http:\/\/\S+),/.exec(proxy.stderr())?.[1] as string;
        const list = await fetch(`${url}/store/orders`, {
          headers: { authorization: `Bearer ${TARGET_KEY}` },
        });
        assert.equal(list.status, 200);
        await list.text();
        // In a row, as npm, tsx and a CI runner each relay the one a job gets.
        for (let sent = 0; sent < signals; sent++) process.kill(-(proxy.child.pid as number), "SIGTERM");
        const { code, stderr } = await proxy.finished;
        assert.equal(code, 0, stderr);
        assertWholeReports(folder);
      });
    });
  }

  it("a watcher on the report folder sees each report's final name only renamed into place, whole", async () => {
    await withTarget({}, async (upstream) => {
      const folder = mkdtempSync(join(project(), "watched-"));
      const finals = ["proxy.json", "proxy.xml", "proxy.html", "proxy.md", "proxy.har"];
      const seen: string[] = [];
      const problems: string[] = [];
      const watcher = watch(folder, (event, name) => {
        if (!name || !finals.includes(name)) return;
        seen.push(`${event} ${name}`);
        if (event !== "rename") problems.push(`${event} ${name}: written in place`);
        const path = join(folder, name);
        if (!existsSync(path)) return;
        const text = readFileSync(path, "utf8");
        const whole =
          name.endsWith(".json") || name.endsWith(".har")
            ? (() => {
                try {
                  JSON.parse(text);
                  return true;
                } catch {
                  return false;
                }
              })()
            : name.endsWith(".xml")
              ? /<\/testsuites>\s*$/.test(text)
              : name.endsWith(".html")
                ? /<\/html>\s*$/.test(text)
                : text.length > 0;
        if (!whole) problems.push(`${name} read cut, at ${text.length} characters`);
      });
      try {
        const proxy = startBin(project(), "petstore-conformance", [
          ...proxyOn(upstream),
          ...["json", "junit", "html", "markdown"].flatMap((reporter, index) => [
            "--reporter",
            `${reporter}:${join(folder, finals[index] as string)}`,
          ]),
          "--har",
          join(folder, "proxy.har"),
          "--",
          ...readList("PETSTORE_PROXY_URL", TARGET_KEY, 0),
        ]);
        const { code, stderr } = await proxy.finished;
        assert.equal(code, 0, stderr);
        await sleep(200);
      } finally {
        watcher.close();
      }
      assert.deepEqual(problems, []);
      for (const name of finals)
        assert.ok(seen.includes(`rename ${name}`), `${name} never appeared: ${seen}`);
    });
  });

  it("against a deployment that lists ids as strings, no DELETE reaches an order the run was not given", async () => {
    const deletes = { segments: [] as string[], cancelled: [] as string[] };
    await withTarget({ stringIds: true, deletes }, async (target) => {
      const result = await runBin(project(), "petstore-conformance", [
        "--base-url",
        target,
        "--api-key",
        TARGET_KEY,
        "--pending-order-id",
        PENDING_ID,
        "--shipped-order-id",
        SHIPPED_ID,
        "--reporter",
        "json",
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stdout, /"id": "listOrders\.body"|list-/);
    });
    assert.deepEqual(deletes.cancelled, [PENDING_ID]);
    const top = "9223372036854775807";
    const anOrderId = (segment: string) => /^\d{1,19}$/.test(segment) && BigInt(segment) <= BigInt(top);
    for (const segment of deletes.segments)
      assert.ok([PENDING_ID, SHIPPED_ID, top].includes(segment) || !anOrderId(segment), segment);
  });
}
