import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { connect, createServer as createTcpServer, type Socket } from "node:net";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ProxyProcess, startSourceProxy } from "../../test-support/proxy-process.ts";
import { TARGET_KEY, withTarget } from "../../test-support/target-server.ts";
import { runProxy } from "../proxy/run-proxy.ts";
import type { RunOutcome } from "../reports/outcome.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-proxy-supervisor-");

function startProxy(args: string[], shellPrefix?: string): Promise<ProxyProcess> {
  return startSourceProxy(args, shellPrefix === undefined ? {} : { shellPrefix });
}

/** One raw HTTP/1.1 request on a connection of its own: the head exactly as written, the answer's text. */
async function raw(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, "connect");
  // Written, not ended: Node's server drops a request whose client half-closes before the answer.
  socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  let text = "";
  socket.on("data", (chunk) => {
    text += chunk;
  });
  await once(socket, "close");
  return text;
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
const auth = `Authorization: Bearer ${TARGET_KEY}`;
const readReport = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Report;

/**
 * An upstream that refuses the proxy's keyless start probe with 401, as an API does, and answers every
 * request with a key by switching protocols, which no request through the proxy asked for.
 */
async function switchingUpstream(): Promise<{ url: string; close: () => void }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    let head = "";
    socket.on("data", (chunk) => {
      head += chunk;
      if (!head.includes("\r\n\r\n")) return;
      const keyed = /^authorization:/im.test(head);
      head = "";
      if (keyed)
        socket.write(
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nhi",
        );
      else {
        const body = '{"code":"unauthorized","message":"no key","status":401}';
        socket.write(
          `HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        );
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe("the proxy's supervisor: no exchange ends the process, no gate passes silently", () => {
  after(() => undefined);

  it("a Host or target it cannot parse is refused at the edge, with --har, and the proxy lives on", async () => {
    await withTarget({}, async (upstream) => {
      const har = join(folder, "edge.har");
      const json = join(folder, "edge.json");
      const proxy = await startProxy(["--upstream", upstream, "--har", har, "--reporter", `json:${json}`]);
      const { port } = new URL(proxy.url);
      const refused = [
        "GET /v1/store/orders HTTP/1.1\r\nHost: localhost:99999",
        "GET /v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1:65536",
        "GET /v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1:0",
        `GET http://[zz/ HTTP/1.1\r\nHost: 127.0.0.1:${port}`,
        `OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1:${port}`,
        `GET ws://127.0.0.1:${port}/v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}`,
        `GET ftp://127.0.0.1:${port}/v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}`,
        `GET x://y/v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}`,
        `GET http://elsewhere.example/v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}`,
      ];
      for (const head of refused) {
        const answer = await raw(proxy.url, `${head}\r\n${auth}`);
        assert.equal(statusOf(answer), 400, `${head.split("\r\n").join(" | ")} → ${answer.slice(0, 200)}`);
      }
      // The absolute form of the upstream's own URL, as a client configured with a forward proxy sends it.
      const absolute = await raw(
        proxy.url,
        `GET ${upstream}/store/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth}`,
      );
      assert.equal(statusOf(absolute), 200, absolute.slice(0, 300));
      assert.equal(proxy.child.exitCode, null, "the proxy is still running");
      const { code } = await proxy.stop("SIGTERM");
      assert.equal(code, 0);
      const entries = JSON.parse(readFileSync(har, "utf8")).log.entries as Array<{
        request: { url: string };
      }>;
      assert.deepEqual(
        entries.map((entry) => entry.request.url),
        [`http://127.0.0.1:${port}/v1/store/orders`],
      );
      assert.equal(readReport(json).traffic?.exchanges, 1);
    });
  });

  it("an upstream that switches protocols: a 502 at once; SIGTERM writes every report and the gate fails", async () => {
    const upstream = await switchingUpstream();
    try {
      const json = join(folder, "switch.json");
      const junit = join(folder, "switch.xml");
      const har = join(folder, "switch.har");
      const proxy = await startProxy([
        "--upstream",
        upstream.url,
        "--fail-on-violation",
        "--reporter",
        `json:${json}`,
        "--reporter",
        `junit:${junit}`,
        "--har",
        har,
      ]);
      const answer = await raw(proxy.url, `GET /v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}`);
      assert.equal(statusOf(answer), 502, answer);
      assert.match(answer, /101 Switching Protocols/);
      const { code, stderr } = await proxy.stop("SIGTERM");
      // No whole answer from the upstream: not everything was checked, and the line names why.
      assert.equal(code, 2, stderr);
      assert.match(
        stderr,
        /^error: --fail-on-violation: 1 request got no whole answer from the upstream[^\n]*101 Switching Protocols/m,
      );
      for (const file of [json, junit, har]) assert.ok(existsSync(file), `${file} written`);
      assert.equal(readReport(json).traffic?.upstreamFailures, 1);
    } finally {
      upstream.close();
    }
  });

  it("a HAR that can no longer be written (EFBIG) is said once; the rest goes on and the exit code is 2", async () => {
    await withTarget({}, async (upstream) => {
      const har = join(folder, "big.har");
      const json = join(folder, "big.json");
      // A file size limit of 64 KiB: the HAR outgrows it, the report stays within it.
      const proxy = await startProxy(
        ["--upstream", upstream, "--har", har, "--reporter", `json:${json}`],
        "ulimit -f 64",
      );
      for (let request = 0; request < 200; request++) {
        const answer = await raw(proxy.url, `GET /v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}`);
        assert.equal(statusOf(answer), 200);
      }
      const { code, stderr } = await proxy.stop("SIGTERM");
      assert.equal(code, 2, stderr);
      assert.equal(stderr.match(/cannot write the HAR/g)?.length, 1, stderr);
      const report = readReport(json);
      assert.equal(report.traffic?.exchanges, 200);
      assert.ok(report.warnings.some((warning) => /cannot write the HAR .*EFBIG/.test(warning)));
      // The HAR keeps the exchanges written whole before the limit, and is valid JSON.
      const kept = JSON.parse(readFileSync(har, "utf8")).log.entries.length as number;
      assert.ok(kept > 0 && kept < 200, `${kept} entries kept`);
    });
  });

  it("--flush-every writes the reports and the HAR while it runs: a SIGKILL keeps what was flushed", async () => {
    await withTarget({}, async (upstream) => {
      const har = join(folder, "flushed.har");
      const json = join(folder, "flushed.json");
      const proxy = await startProxy([
        "--upstream",
        upstream,
        "--har",
        har,
        "--reporter",
        `json:${json}`,
        "--flush-every",
        "100ms",
      ]);
      const answer = await raw(proxy.url, `GET /v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}`);
      assert.equal(statusOf(answer), 200);
      const flushed = () => {
        try {
          const entries = JSON.parse(readFileSync(har, "utf8")).log.entries.length;
          return entries === 1 && readReport(json).traffic?.exchanges === 1;
        } catch {
          return false;
        }
      };
      // Waited for, not timed: a generous cap only keeps a proxy that never flushes from hanging the run.
      for (let wait = 0; wait < 400 && !flushed(); wait++) await new Promise((done) => setTimeout(done, 50));
      await proxy.stop("SIGKILL");
      assert.ok(flushed(), "the flushed HAR and report outlive the kill, whole");
      // Written while it ran, the report is no verdict: it never says passed should nothing replace it.
      const outcome = (JSON.parse(readFileSync(json, "utf8")) as { outcome: RunOutcome }).outcome;
      assert.equal(outcome.verdict, "running");
    });
  });

  it("a part that throws ends only its own exchange's step: the client is answered, the fault reported", async () => {
    await withTarget({}, async (upstream) => {
      let calls = 0;
      const proxy = await runProxy({
        upstream,
        port: 0,
        env: {},
        errors: true,
        onExchange() {
          calls++;
          if (calls === 1) throw new Error("the live line broke");
        },
      });
      try {
        for (let request = 0; request < 3; request++) {
          const answer = await fetch(`${proxy.url}/store/orders`, {
            headers: { authorization: `Bearer ${TARGET_KEY}` },
          });
          assert.equal(answer.status, 200, "a held answer is still passed on");
          await answer.arrayBuffer();
        }
      } finally {
        const report = await proxy.close();
        assert.equal(report.traffic?.exchanges, 3);
        assert.equal(report.traffic?.faults, 1);
        assert.match(
          report.warnings[0] ?? "",
          /the proxy itself failed once.*live line: the live line broke/,
        );
      }
    });
  });

  it("with --header credentials, pages of other sites are refused, simple requests included", async () => {
    await withTarget({}, async (upstream) => {
      const proxy = await runProxy({
        upstream,
        port: 0,
        env: {},
        headers: { Authorization: `Bearer ${TARGET_KEY}` },
        corsOrigins: ["http://app.test"],
      });
      const own = new URL(proxy.url).origin;
      try {
        const send = (headers: Record<string, string>, method = "GET") =>
          fetch(`${proxy.url}/store/orders`, { method, headers }).then(async (answer) => {
            await answer.arrayBuffer();
            return answer.status;
          });
        assert.equal(await send({ origin: "http://evil.test" }), 403, "a cross-origin fetch");
        assert.equal(await send({ origin: "http://evil.test" }, "POST"), 403, "a form or no-cors POST");
        assert.equal(await send({ "sec-fetch-site": "cross-site" }), 403, "an <img> with no Origin");
        assert.equal(await send({ "sec-fetch-site": "same-site" }), 403, "another port of the same site");
        assert.equal(await send({ origin: "null" }), 403, "a sandboxed page");
        assert.equal(await send({ origin: "http://app.test" }), 200, "the page named by --cors-origin");
        assert.equal(await send({ origin: own, "sec-fetch-site": "same-origin" }), 200, "its own origin");
        assert.equal(await send({}), 200, "a test or curl, which is no page");
      } finally {
        const report = await proxy.close();
        assert.equal(report.traffic?.exchanges, 3, "refused requests never reach the upstream");
      }
    });
  });

  it("stop signals in a burst: the reports are written and the exit code is the proxy's own", async () => {
    await withTarget({}, async (upstream) => {
      for (let run = 0; run < 3; run++) {
        const json = join(folder, `burst-${run}.json`);
        const proxy = await startProxy(["--upstream", upstream, "--reporter", `json:${json}`]);
        const exited = once(proxy.child, "exit");
        for (let signal = 0; signal < 3; signal++) {
          proxy.child.kill("SIGTERM");
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const [code, signal] = await exited;
        assert.deepEqual({ code, signal }, { code: 0, signal: null });
        assert.ok(existsSync(json));
      }
    });
  });
});
