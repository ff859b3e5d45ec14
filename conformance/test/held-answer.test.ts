import assert from "node:assert/strict";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { Agent, createServer, type IncomingMessage, request } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { liveLinesWritten, type ProxyProcess, startSourceProxy } from "../../test-support/proxy-process.ts";
import { runProxy } from "../proxy/run-proxy.ts";
import type { Report } from "../reports/report.ts";

const order = (id: number) =>
  `{"id":${id},"petId":1,"quantity":1,"shipDate":"2026-11-02T10:00:00Z","complete":false}`;

/** Valid lists of `n` orders, written in 64 KiB pieces, chunked or with a Content-Length. */
async function listUpstream() {
  const server = createServer(async (incoming, response) => {
    incoming.resume();
    const url = new URL(incoming.url ?? "/", "http://upstream");
    const n = Number(url.searchParams.get("n") ?? 1);
    // bad=1: the last order's quantity is text, which breaks the contract.
    const bad = url.searchParams.get("bad") === "1" ? `,{"id":${n + 1},"petId":1,"quantity":"many"}` : "";
    const body = Buffer.from(`[${Array.from({ length: n }, (_, at) => order(at + 1)).join(",")}${bad}]`);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (url.searchParams.get("chunked") !== "1") headers["content-length"] = String(body.length);
    response.writeHead(200, headers);
    for (let at = 0; at < body.length; at += 65536)
      if (!response.write(body.subarray(at, at + 65536)))
        await new Promise((resolve) => response.once("drain", resolve));
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The list the upstream sends for `n` valid orders. */
function listOf(n: number): string {
  return `[${Array.from({ length: n }, (_, at) => order(at + 1)).join(",")}]`;
}

/** A list through the proxy, read to its end: its status and bytes. */
function fetchList(proxyUrl: string, query: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(
      `${proxyUrl}/store/orders?${query}`,
      { headers: { authorization: "Bearer some-key" } },
      (response) => {
        const parts: Buffer[] = [];
        response.on("data", (chunk: Buffer) => parts.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts) }));
        response.on("error", reject);
      },
    )
      .on("error", reject)
      .end();
  });
}

/** The proxy's folders of held answers under `tmp`, and the files of them it has open. */
function spillsOf(proxy: ProxyProcess, tmp: string): { folders: string[]; open: string[] } {
  const folders = readdirSync(tmp).filter((name) => name.startsWith("petstore-proxy-held-"));
  const open: string[] = [];
  for (const fd of readdirSync(`/proc/${proxy.child.pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${proxy.child.pid}/fd/${fd}`);
      if (target.startsWith(tmp)) open.push(target);
    } catch {
      // Closed while listed.
    }
  }
  return { folders, open };
}

/** A list through the proxy, read to its end: its status and length, or how it broke off. */
function readList(proxyUrl: string, query: string, agent: Agent) {
  return new Promise<{ status: number; bytes: number } | { broken: string }>((resolve) => {
    const outgoing = request(
      `${proxyUrl}/store/orders?${query}`,
      { agent, headers: { authorization: "Bearer some-key" } },
      (response) => {
        let bytes = 0;
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, bytes }));
        response.on("error", (error) => resolve({ broken: error.message }));
      },
    );
    outgoing.on("error", (error) => resolve({ broken: error.message }));
    outgoing.end();
  });
}

describe("held answers (--errors) at a small budget", () => {
  it("every list held, let go of for room or judged in part, reaches its client whole and ended", async () => {
    const upstream = await listUpstream();
    // A deadline well past a list's own time: an answer whose end never comes is cut there, and fails.
    const proxy = await startSourceProxy([
      "--upstream",
      upstream.url,
      "--errors",
      "--max-memory",
      "16MiB",
      "--deadline",
      "20s",
    ]);
    const agent = new Agent({ keepAlive: true });
    try {
      const lists = await Promise.all(
        Array.from({ length: 12 }, (_, at) =>
          readList(proxy.url, `n=${30_000 + at}&chunked=${(at + 1) % 2}`, agent),
        ),
      );
      lists.forEach((list, at) => {
        const expected = `[${Array.from({ length: 30_000 + at }, (_, index) => order(index + 1)).join(",")}]`;
        assert.deepEqual(list, { status: 200, bytes: expected.length }, `list ${at}`);
      });
    } finally {
      agent.destroy();
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
  });

  it("an answer past its share of memory waits in a file of the proxy's own, closed at the exchange's end", async () => {
    const upstream = await listUpstream();
    const tmp = tempFolder("conformance-held-spill-");
    const proxy = await startSourceProxy(["--upstream", upstream.url, "--errors"], { env: { TMPDIR: tmp } });
    try {
      // About 2.6 MB each: past the 1 MiB an answer keeps in memory.
      const [passed, chunked, violating] = await Promise.all([
        fetchList(proxy.url, "n=30000"),
        fetchList(proxy.url, "n=30001&chunked=1"),
        fetchList(proxy.url, "n=30000&bad=1"),
      ]);
      assert.equal(passed.status, 200);
      assert.ok(passed.body.equals(Buffer.from(listOf(30_000))), "passed on byte for byte");
      assert.ok(chunked.body.equals(Buffer.from(listOf(30_001))), "passed on byte for byte");
      assert.equal(violating.status, 502, "a violating answer past the share is still replaced");
      assert.equal(JSON.parse(String(violating.body)).code, "contract_violation");
      await liveLinesWritten(proxy, 3, 20_000);
      const during = spillsOf(proxy, tmp);
      // Each file's folder is removed as soon as the file is open: a kill leaves nothing on disk.
      assert.deepEqual(during.folders, [], "no folder on disk while the proxy runs");
      assert.deepEqual(during.open, [], "every file closed at its exchange's end");
    } finally {
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
    assert.deepEqual(
      readdirSync(tmp).filter((name) => name.startsWith("petstore-proxy-held-")),
      [],
      "nothing left at the proxy's stop",
    );
  });

  it("a file that can take no more (EFBIG) lets its answer go on whole, said once, and the proxy goes on", async () => {
    const upstream = await listUpstream();
    const tmp = tempFolder("conformance-held-efbig-");
    const reportFile = join(tmp, "report.json");
    // Files of at most 1 MiB (dash counts 512-byte blocks): each list's file outgrows it.
    const proxy = await startSourceProxy(
      ["--upstream", upstream.url, "--errors", "--reporter", `json:${reportFile}`],
      { env: { TMPDIR: tmp }, shellPrefix: "ulimit -f 2048" },
    );
    try {
      const lists = await Promise.all([
        fetchList(proxy.url, "n=60000"),
        fetchList(proxy.url, "n=60001&chunked=1"),
      ]);
      assert.ok(lists[0]?.body.equals(Buffer.from(listOf(60_000))), "sent whole, in order");
      assert.ok(lists[1]?.body.equals(Buffer.from(listOf(60_001))), "sent whole, in order");
      await liveLinesWritten(proxy, 2, 20_000);
      assert.deepEqual(spillsOf(proxy, tmp).open, [], "no file left open");
      assert.equal(proxy.child.exitCode, null, "the proxy is alive");
    } finally {
      const { stderr } = await proxy.stop("SIGTERM");
      await upstream.close();
      assert.equal(stderr.match(/cannot write held answers/g)?.length, 1, stderr);
      assert.match(stderr, /EFBIG/);
    }
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
    assert.ok(report.warnings.some((warning) => /cannot write held answers .*EFBIG/.test(warning)));
    assert.equal(report.traffic?.faults, 0);
  });
});

/** A list asked for through the proxy by a client that reads nothing until `resume` is called. */
function pausedClient(proxyUrl: string, query: string) {
  let reading = false;
  let answer: IncomingMessage | undefined;
  let headed!: () => void;
  const answered = new Promise<void>((resolve) => (headed = resolve));
  const got = new Promise<{ bytes: number; whole: boolean }>((resolve, reject) => {
    const sent = request(
      `${proxyUrl}/store/orders?${query}`,
      { headers: { authorization: "Bearer k" } },
      (response) => {
        answer = response;
        if (!reading) response.pause();
        headed();
        let bytes = 0;
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
        });
        response.on("end", () => resolve({ bytes, whole: response.complete }));
        response.on("error", () => resolve({ bytes, whole: false }));
        response.on("aborted", () => resolve({ bytes, whole: false }));
      },
    );
    sent.on("error", reject).end();
  });
  return {
    got,
    /** Its answer's head came. */
    answered,
    resume: () => {
      reading = true;
      answer?.resume();
    },
  };
}

describe("held answers being passed on at the stop", () => {
  // Far more than the sockets' buffers take: a client that reads nothing keeps most of it in the file.
  const ORDERS = 200_000;

  /** A proxy with --errors whose one held list is judged, its head at a client that reads nothing yet. */
  async function judgedAndWaiting() {
    const upstream = await listUpstream();
    let judged!: () => void;
    const verdictIn = new Promise<void>((resolve) => (judged = resolve));
    const proxy = await runProxy({
      upstream: upstream.url,
      port: 0,
      env: {},
      errors: true,
      onExchange: () => judged(),
    });
    const client = pausedClient(proxy.url, `n=${ORDERS}`);
    await verdictIn;
    await client.answered;
    return { upstream, proxy, client };
  }

  it("get the stop's grace to reach their clients whole, after their verdict", async () => {
    const { upstream, proxy, client } = await judgedAndWaiting();
    try {
      const closing = proxy.close({ graceMs: 60_000 });
      client.resume();
      const { bytes, whole } = await client.got;
      assert.equal(whole, true);
      assert.equal(bytes, Buffer.byteLength(listOf(ORDERS)));
      const report = await closing;
      assert.equal(report.traffic?.cutOff, 0);
      assert.ok(!report.warnings.some((warning) => /cut at the stop/.test(warning)));
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  it("cut when the grace is over are named in the report's warnings, their verdict kept", async () => {
    const { upstream, proxy, client } = await judgedAndWaiting();
    try {
      const report = await proxy.close({ graceMs: 200 });
      client.resume();
      const { bytes, whole } = await client.got;
      assert.equal(whole, false);
      assert.ok(bytes < Buffer.byteLength(listOf(ORDERS)));
      assert.equal(report.traffic?.judged, 1);
      assert.ok(
        report.warnings.some((warning) =>
          /^1 answer was cut at the stop while still being passed on .*: #\d+ GET \/v1\/store\/orders\?n=200000$/.test(
            warning,
          ),
        ),
        report.warnings.join("\n"),
      );
    } finally {
      await upstream.close();
    }
  });
});
