import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { tempFolder } from "../../common/temp-folder.ts";
import { startSourceProxy } from "../../test-support/proxy-process.ts";
import type { Report } from "../reports/report.ts";

// Generated attacks on the proxy as a process: hostile upstream answers and hostile clients at once. After
// each run the process must have lived, answered or cut every client by its deadline, stayed within its
// memory budget, written whole reports, exited with the code its report calls for, and shown no secret.

const folder = tempFolder("conformance-proxy-attacks-");
const TOKEN = "attack-token-7f3a9c";
const GATEWAY = "gateway-secret-51d2e8";
const DEADLINE_MS = 1500;
const BUDGET_MIB = 64;
/** Runs of the property in `npm test`; PROXY_ATTACK_RUNS sets more (the bench's long version). */
const RUNS = Number(process.env.PROXY_ATTACK_RUNS ?? 6);

type Framing = "length" | "short-length" | "long-length" | "chunked" | "close" | "bad-chunk";
interface UpstreamAnswer {
  status: number;
  headers: Array<[string, string]>;
  framing: Framing;
  /** The body's text, or `long:N` for a JSON string of N letters. */
  body: string;
  gzip: boolean;
  /** Before the head, in ms. */
  delayMs: number;
  /** Reset the connection after this many bytes of the whole answer, if set. */
  resetAfter?: number;
  /** Stop writing after the head and never end. */
  hang: boolean;
}

const headerName = fc.constantFrom(
  "content-type",
  "x-echo",
  "set-cookie",
  "content-encoding",
  "transfer-encoding",
  "content-length",
  "connection",
  "upgrade",
  "x-\u00ff",
);
const headerValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    "application/json",
    "gzip",
    "chunked",
    "close",
    TOKEN,
    Buffer.from(TOKEN).toString("base64"),
    `Bearer ${TOKEN}`,
    GATEWAY,
  ),
);
const listBody = fc
  .array(fc.record({ id: fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }), quantity: fc.integer() }), {
    maxLength: 50,
  })
  .map((orders) => `[${orders.map((order) => `{"id":${order.id},"quantity":${order.quantity}}`).join(",")}]`);
const body = fc.oneof(
  listBody,
  fc.string({ maxLength: 200 }),
  fc.constantFrom(`{"code":"x","message":"${TOKEN}","status":401}`, `[{"id":1,"note":"${GATEWAY}"}]`, "[{"),
  // A long string, written as its length so that a counterexample stays readable.
  fc.integer({ min: 0, max: 300_000 }).map((size) => `long:${size}`),
);
const upstreamAnswer: fc.Arbitrary<UpstreamAnswer> = fc.record(
  {
    status: fc.oneof(
      fc.constantFrom(200, 204, 401, 404, 409, 101, 100, 199, 304, 500, 599),
      fc.integer({ min: 0, max: 999 }),
    ),
    headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 }),
    framing: fc.constantFrom<Framing>(
      "length",
      "short-length",
      "long-length",
      "chunked",
      "close",
      "bad-chunk",
    ),
    body,
    gzip: fc.boolean(),
    delayMs: fc.constantFrom(0, 0, 5, 50),
    resetAfter: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
    hang: fc.boolean().map((hang) => hang && Math.random() < 0.5),
  },
  { requiredKeys: ["status", "headers", "framing", "body", "gzip", "delayMs", "hang"] },
);

interface ClientRequest {
  host: string;
  target: string;
  headers: Array<[string, string]>;
  /** Bytes of body sent, against the Content-Length it claims. */
  bodyBytes: number;
  claimedLength?: number;
  /** Hang up right after the head. */
  abort: boolean;
}

const clientRequest: fc.Arbitrary<ClientRequest> = fc.record(
  {
    host: fc.constantFrom("127.0.0.1", "localhost:99999", "127.0.0.1:65536", "[::1]", "evil.test", "", "a b"),
    target: fc.oneof(
      fc.constantFrom(
        "/v1/store/orders",
        "/v1/store/orders/9223372036854775807",
        "/v1/store/orders/1",
        "/v1/store/orders?token=x",
        "/elsewhere",
        "*",
        "http://[zz/",
        "ws://127.0.0.1/v1/store/orders",
        "//[zz/",
        // spellings of the routes, and of none
        "/v1/store/./orders",
        "/V1/store/orders/",
        "/v1//store/orders;x=1",
        "/v1/store/%6Frders",
        "/v1/../../v1/store/orders",
        "/v1/store/orders/%2e%2e",
        "/v1/store/orders/1;x=1/",
      ),
      fc.string({ maxLength: 20 }).map((rest) => `/v1/${encodeURIComponent(rest)}`),
    ),
    headers: fc.array(
      fc.oneof(
        fc.constant<[string, string]>(["Authorization", `Bearer ${TOKEN}`]),
        fc.constant<[string, string]>(["Authorization", `Bearer\t${TOKEN}`]),
        fc.constant<[string, string]>(["X-Api-Key", TOKEN]),
        fc.constant<[string, string]>(["Origin", "http://evil.test"]),
        fc.constant<[string, string]>(["Accept-Encoding", "gzip"]),
        fc.tuple(fc.constantFrom("X-Any", "Cookie"), fc.stringMatching(/^[\x20-\x7e]{0,40}$/)),
      ),
      { maxLength: 4 },
    ),
    bodyBytes: fc.integer({ min: 0, max: 2000 }),
    claimedLength: fc.option(fc.integer({ min: 0, max: 4000 }), { nil: undefined }),
    abort: fc.boolean().map((abort) => abort && Math.random() < 0.3),
  },
  { requiredKeys: ["host", "target", "headers", "bodyBytes", "abort"] },
);

/** An upstream that answers the proxy's start probe (its first request) with 401, then request n with answers[n]. */
async function hostileUpstream(answers: readonly UpstreamAnswer[]) {
  const sockets = new Set<Socket>();
  let next = 0;
  let probed = false;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    let head = "";
    socket.on("data", (chunk) => {
      head += chunk.toString("latin1");
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) return;
      head = "";
      if (!probed) {
        probed = true;
        socket.write(
          "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
        );
        return;
      }
      const answer = answers[next++ % Math.max(answers.length, 1)];
      if (answer) setTimeout(() => play(socket, answer), answer.delayMs);
      else socket.destroy();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

function play(socket: Socket, answer: UpstreamAnswer): void {
  if (socket.destroyed) return;
  const long = /^long:(\d+)$/.exec(answer.body);
  const text = Buffer.from(long ? `"${"a".repeat(Number(long[1]))}"` : answer.body);
  const payload = answer.gzip ? gzipSync(text) : text;
  const lines = [`HTTP/1.1 ${String(answer.status).padStart(3, "0")} Reason`];
  for (const [name, value] of answer.headers) lines.push(`${name}: ${value.replace(/[\r\n]/g, " ")}`);
  if (answer.gzip) lines.push("Content-Encoding: gzip");
  const framing = answer.framing;
  if (framing === "length") lines.push(`Content-Length: ${payload.length}`);
  if (framing === "short-length") lines.push(`Content-Length: ${Math.max(payload.length - 3, 0)}`);
  if (framing === "long-length") lines.push(`Content-Length: ${payload.length + 10}`);
  if (framing === "chunked" || framing === "bad-chunk") lines.push("Transfer-Encoding: chunked");
  let wire = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
  if (!answer.hang) {
    const content =
      framing === "chunked"
        ? Buffer.concat([
            Buffer.from(`${payload.length.toString(16)}\r\n`),
            payload,
            Buffer.from("\r\n0\r\n\r\n"),
          ])
        : framing === "bad-chunk"
          ? Buffer.concat([Buffer.from("zz\r\n"), payload])
          : payload;
    wire = Buffer.concat([wire, content]);
  }
  if (answer.resetAfter !== undefined) {
    socket.write(wire.subarray(0, answer.resetAfter));
    socket.resetAndDestroy();
    return;
  }
  socket.write(wire);
  if (framing === "close" && !answer.hang) socket.end();
}

/** A client's request as raw bytes; resolves once the proxy answered or closed, or says it never did. */
async function send(proxyUrl: string, request: ClientRequest): Promise<"answered" | "never"> {
  const { hostname, port } = new URL(proxyUrl);
  const socket = connect(Number(port), hostname);
  socket.on("error", () => {});
  await once(socket, "connect").catch(() => undefined);
  const lines = [`GET ${request.target} HTTP/1.1`];
  if (request.host !== "") lines.push(`Host: ${request.host}`);
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  const length = request.claimedLength ?? request.bodyBytes;
  if (length > 0) lines.push(`Content-Length: ${length}`);
  socket.write(`${lines.join("\r\n")}\r\n\r\n`);
  if (request.abort) {
    socket.destroy();
    return "answered";
  }
  socket.write(Buffer.alloc(Math.min(request.bodyBytes, length), 0x61));
  const closed = once(socket, "close").then(() => "answered" as const);
  const answered = new Promise<"answered">((resolve) => {
    socket.on("data", (chunk) => {
      // A head with a whole answer is enough: the connection may stay open (keep-alive).
      if (/^HTTP\/1\.1 \d{3}/.test(chunk.toString("latin1"))) setTimeout(() => resolve("answered"), 50);
    });
  });
  const never = new Promise<"never">((resolve) =>
    setTimeout(() => resolve("never"), DEADLINE_MS + 4000).unref(),
  );
  const outcome = await Promise.race([closed, answered, never]);
  socket.destroy();
  return outcome;
}

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

/** The code the report calls for under --fail-on-violation. */
function expectedCode(report: Report): number {
  if (report.summary.failed > 0) return 1;
  if ((report.traffic?.faults ?? 0) > 0) return 2;
  if ((report.traffic?.judgedInPart ?? 0) > 0) return 2;
  // A request the upstream gave no whole answer was not checked: the gate does not pass it.
  if ((report.traffic?.upstreamFailures ?? 0) > 0) return 2;
  return (report.traffic?.judged ?? 0) === 0 ? 1 : 0;
}

describe("generated attacks on the proxy", () => {
  it(`hostile upstreams and clients at once (${RUNS} runs): alive, answered, bounded, whole, truthful, secret`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(upstreamAnswer, { minLength: 1, maxLength: 6 }),
        fc.array(clientRequest, { minLength: 1, maxLength: 8 }),
        async (answers, clients) => {
          run++;
          const upstream = await hostileUpstream(answers);
          const json = join(folder, `attack-${run}.json`);
          const har = join(folder, `attack-${run}.har`);
          const proxy = await startSourceProxy([
            "--upstream",
            upstream.url,
            "--fail-on-violation",
            "--deadline",
            `${DEADLINE_MS}ms`,
            "--timeout",
            "1000ms",
            "--max-memory",
            `${BUDGET_MIB}MiB`,
            "--header",
            `X-Gateway: ${GATEWAY}`,
            "--reporter",
            `json:${json}`,
            "--har",
            har,
          ]);
          try {
            const outcomes = await Promise.all(clients.map((client) => send(proxy.url, client)));
            assert.deepEqual(
              outcomes.filter((outcome) => outcome === "never"),
              [],
              "every client answered or cut",
            );
            assert.equal(proxy.child.exitCode, null, "the proxy is alive");
            const pid = proxy.child.pid ?? 0;
            assert.ok(peakRssMiB(pid) <= BUDGET_MIB + 100, `peak RSS ${peakRssMiB(pid)} MiB`);
            const { code, stdout, stderr } = await proxy.stop("SIGTERM");
            assert.ok(existsSync(json) && existsSync(har), "the reports are written");
            const reportText = readFileSync(json, "utf8");
            const harText = readFileSync(har, "utf8");
            const report = JSON.parse(reportText) as Report;
            JSON.parse(harText);
            assert.equal(code, expectedCode(report), stderr);
            // The proxy hides the configured credentials and each exchange's own: a token the upstream echoes
            // to a request that did not carry it is no credential the proxy could know of.
            const everyOneCarriesToken = clients.every((client) =>
              client.headers.some(
                ([name, value]) => /^(authorization|x-api-key)$/i.test(name) && value.includes(TOKEN),
              ),
            );
            for (const secret of everyOneCarriesToken ? [TOKEN, GATEWAY] : [GATEWAY])
              for (const form of [secret, Buffer.from(secret).toString("base64")])
                for (const [name, output] of Object.entries({ stdout, stderr, reportText, harText }))
                  assert.ok(!output.includes(form), `${form} in ${name}`);
          } catch (error) {
            // The counterexample alone is long: the reason comes first.
            process.stderr.write(`attack run ${run}: ${(error as Error).message.slice(0, 2000)}\n`);
            throw error;
          } finally {
            if (proxy.child.exitCode === null) proxy.child.kill("SIGKILL");
            upstream.close();
          }
        },
      ),
      { numRuns: RUNS, endOnFailure: true },
    );
  });
});
