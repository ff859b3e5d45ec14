import assert from "node:assert/strict";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { tempFolder } from "../../common/temp-folder.ts";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import type { Report } from "../reports/report.ts";
import { createHttpClient, type HttpClient } from "../target/http-client.ts";
import { createUndiciClient } from "../target/undici-client.ts";
import { MOCK_KEY, MOCK_PENDING_ID, MOCK_RACE_ID, MOCK_SHIPPED_ID } from "./mock-ids.ts";
import { cli } from "./run-cli.ts";

// The suite's real command against the project's mock behind a relay that codes the mock's answers as a
// gateway would, asked or not: what decodes to the mock's answer passes, what does not fails in one line.

/** How the relay codes one answer's body: its Content-Encoding and bytes, or undefined to leave it. */
type Coder = (body: Buffer, method: string, path: string) => { encoding: string; body: Buffer } | undefined;

const MiB = 1024 * 1024;
const coded =
  (encoding: string, code: (body: Buffer) => Buffer): Coder =>
  (body) => ({ encoding, body: code(body) });

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Relays every request to the mock and answers with the mock's answer, its body as `coder` makes it. */
async function codingRelay(mockUrl: string, coder: Coder): Promise<{ url: string; close(): Promise<void> }> {
  const mock = new URL(mockUrl);
  const server: Server = createServer(async (incoming, answer) => {
    const sent = await readAll(incoming);
    const forwarded = request({
      host: mock.hostname,
      port: mock.port,
      method: incoming.method,
      path: incoming.url,
      headers: incoming.headers,
    });
    forwarded.end(sent);
    const [response] = (await once(forwarded, "response")) as [IncomingMessage];
    const body = await readAll(response);
    const { "content-length": _, "transfer-encoding": __, ...headers } = response.headers;
    const recoded =
      body.length > 0 && incoming.url?.startsWith("/v1/")
        ? coder(body, incoming.method ?? "", incoming.url)
        : undefined;
    if (recoded === undefined) {
      answer.writeHead(response.statusCode ?? 502, { ...headers, "content-length": body.length }).end(body);
      return;
    }
    answer
      .writeHead(response.statusCode ?? 502, {
        ...headers,
        "content-encoding": recoded.encoding,
        "content-length": recoded.body.length,
      })
      .end(recoded.body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const folder = tempFolder("answer-body-");
// Loaded into the suite's process: its peak resident memory, written as it exits.
const PEAK_PRELOAD = join(folder, "peak-rss.mjs");
writeFileSync(
  PEAK_PRELOAD,
  'import { writeSync } from "node:fs";\nprocess.on("exit", () => writeSync(2, "peak-rss-kib " + process.resourceUsage().maxRSS + "\\n"));\n',
);

let sessions = 0;
/** The suite's command through a relay coding as `coder` says: its exit code, report and peak memory. */
async function runThrough(mockUrl: string, coder: Coder, ...more: string[]) {
  const relay = await codingRelay(mockUrl, coder);
  try {
    const { code, stdout, stderr } = await cli(
      [
        ...["--base-url", relay.url, "--pending-order-id", MOCK_PENDING_ID],
        ...["--shipped-order-id", MOCK_SHIPPED_ID, "--race-order-id", MOCK_RACE_ID],
        ...["--reporter", "json", "--session", `coded-${++sessions}`, ...more],
      ],
      { PETSTORE_API_KEY: MOCK_KEY, NODE_OPTIONS: `--import=${PEAK_PRELOAD}` },
    );
    const peakKiB = Number(/^peak-rss-kib (\d+)$/m.exec(stderr)?.[1]);
    assert.ok(stdout.startsWith("{"), `a report: ${stderr}`);
    return { code, report: JSON.parse(stdout) as Report, stderr, peakMiB: peakKiB / 1024 };
  } finally {
    await relay.close();
  }
}

const failures = (report: Report) =>
  report.scenarios.flatMap((scenario) =>
    scenario.checks.filter((check) => check.status === "failed").map((check) => check.message ?? ""),
  );

/** Every failure is one line and the coding's own words, never the bytes misread as text or JSON. */
function assertFailsWith(report: Report, expected: RegExp): void {
  const messages = failures(report);
  assert.ok(messages.length > 0, "some checks fail");
  assert.ok(
    messages.some((message) => expected.test(message)),
    messages.join("\n"),
  );
  for (const message of messages) {
    assert.doesNotMatch(message, /UTF-8|not JSON|invalid JSON/i, message);
    assert.equal(message.split("\n").length, 1, message);
  }
}

const isList = (method: string, path: string) => method === "GET" && /^\/v1\/store\/orders(\?|$)/.test(path);
const withJunk = (body: Buffer) => Buffer.concat([brotliCompressSync(body), Buffer.from("junk")]);
/** A gzip body with bytes of its coded data flipped. */
const corrupted = (body: Buffer) => {
  const bytes = gzipSync(body);
  for (let at = 10; at < bytes.length - 8; at += 3) bytes[at] = (bytes[at] as number) ^ 0x5a;
  return bytes;
};

/**
 * A list of spaces that decodes to 10 GiB from about two hundred bytes: gzip members of 64 MiB each in a
 * row (a gzip body may hold several), the whole coded again in brotli.
 */
function bomb(): Buffer {
  const member = gzipSync(Buffer.alloc(64 * MiB, 0x20), { level: 9 });
  const inner = Buffer.concat([gzipSync("["), ...Array<Buffer>(160).fill(member)]);
  return brotliCompressSync(inner);
}

describe("the suite reads answers as their Content-Encoding says", { timeout: 300_000 }, () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());

  const decodable: Record<string, Coder> = {
    gzip: coded("gzip", gzipSync),
    "x-gzip": coded("x-gzip", gzipSync),
    deflate: coded("deflate", deflateSync),
    br: coded("br", brotliCompressSync),
    "gzip, br": coded("gzip, br", (body) => brotliCompressSync(gzipSync(body))),
    "Identity, GZIP": coded("Identity, GZIP", gzipSync),
    identity: coded("identity", (body) => body),
  };
  for (const [encoding, coder] of Object.entries(decodable))
    it(`every answer coded as "${encoding}": decoded, and every check passes`, async () => {
      const { code, report, stderr } = await runThrough(mock.url, coder);
      assert.deepEqual(failures(report), []);
      assert.equal(report.summary.skipped, 0);
      assert.equal(code, 0, stderr);
    });

  it("explore reads coded lists the same: its histories judged, none failed", async () => {
    const relay = await codingRelay(
      mock.url,
      coded("gzip, br", (body) => brotliCompressSync(gzipSync(body))),
    );
    try {
      const { code, stdout, stderr } = await cli(
        ["explore", "--base-url", relay.url, "--api-key", MOCK_KEY, "--hooks", "mock-control"].concat([
          "--budget",
          "2s",
          "--seed",
          "7",
        ]),
      );
      assert.equal(code, 0, stdout + stderr);
      assert.match(stdout, /covered [1-9]\d* histories/);
    } finally {
      await relay.close();
    }
  });

  it("bytes after the end of the coded data fail each check with one line naming the coding", async () => {
    const { code, report } = await runThrough(mock.url, coded("br", withJunk));
    assertFailsWith(report, /^.*br body is corrupt: 4 bytes after the end of its coded data/);
    assert.equal(code, 1);
  });

  it("corrupt coded data fails each check with the decoder's words, never as text that is not UTF-8", async () => {
    const { code, report } = await runThrough(mock.url, coded("gzip", corrupted));
    assertFailsWith(report, /gzip body is corrupt: /);
    assert.equal(code, 1);
  });

  it("a coding this tool does not read leaves those answers not judged, naming it: the run is no pass, no failure", async () => {
    const zstdLists: Coder = (body, method, path) =>
      isList(method, path)
        ? { encoding: "zstd", body: Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), body]) }
        : undefined;
    const { code, report } = await runThrough(mock.url, zstdLists);
    assert.deepEqual(failures(report), [], "the target answered as RFC 9110 allows it to");
    const notJudged = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .filter((check) => check.notJudged)
      .map((check) => check.message ?? "");
    assert.ok(
      notJudged.some((message) =>
        /Content-Encoding "zstd" is not one petstore-conformance reads \(gzip, x-gzip, deflate, br\)/.test(
          message,
        ),
      ),
      notJudged.join("\n"),
    );
    assert.equal(code, 2);
  });

  it("a list that decodes to 10 GiB from a few hundred bytes stops at --max-body, said so, in bounded memory", async () => {
    const lists = bomb();
    const bombLists: Coder = (_body, method, path) =>
      isList(method, path) ? { encoding: "gzip, br", body: lists } : undefined;
    const { code, report, peakMiB } = await runThrough(mock.url, bombLists, "--max-body", "16MiB");
    assert.ok(lists.length < 1024, `${lists.length} bytes`);
    // The spec sets no size limit: past the run's own --max-body, the list is not judged, never failed.
    assert.deepEqual(
      failures(report).filter((message) => message.includes("--max-body")),
      [],
    );
    const body = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .find((check) => check.id === "list-orders.list.body");
    assert.equal(body?.notJudged, true);
    assert.match(
      body?.message ?? "",
      /^not judged: the body is larger than the 16 MiB --max-body allows after decoding its Content-Encoding \(gzip, br\) \(stopped reading at \d+ decoded bytes, \d+ as they came\)/,
    );
    // The bombs served as the refusals' answers are past what an Error record may need: those fail.
    assert.equal(code, 1);
    // The suite's process with its runtime and compiler: what it decoded (9 readings of 16 MiB) is not in it.
    assert.ok(peakMiB > 0 && peakMiB < 250, `peak RSS ${peakMiB} MiB`);
  });
});

const RECORD = '{"code":"not_found","message":"no such order","status":404}';
/** What the coding upstream answers each path with: its Content-Encoding and body. */
const CODED_ANSWERS: Record<string, { encoding: string; body: Buffer }> = {
  "/v1/gzip": { encoding: "gzip", body: gzipSync(RECORD) },
  "/v1/chain": { encoding: "deflate, identity, br", body: brotliCompressSync(deflateSync(RECORD)) },
  "/v1/junk": { encoding: "deflate", body: Buffer.concat([deflateSync(RECORD), Buffer.from("!!")]) },
  "/v1/corrupt": { encoding: "br", body: Buffer.from("not brotli at all") },
  "/v1/zstd": { encoding: "zstd", body: Buffer.from(RECORD) },
  "/v1/bomb": { encoding: "gzip", body: gzipSync(Buffer.alloc(64 * MiB, 0x20)) },
};

describe("both clients decode an answer alike", () => {
  let server: Server;
  let base: URL;
  before(async () => {
    server = createServer((incoming, answer) => {
      const coded = CODED_ANSWERS[incoming.url ?? ""];
      if (coded === undefined) return answer.writeHead(404).end();
      answer
        .writeHead(404, { "content-type": "application/json", "content-encoding": coded.encoding })
        .end(coded.body);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const clients: Record<string, (url: URL) => Promise<HttpClient>> = {
    "node:http": (url) => createHttpClient(url, { timeoutMs: 5000 }),
    undici: (url) => createUndiciClient(url, { timeoutMs: 5000 }),
  };
  for (const [name, create] of Object.entries(clients))
    it(`${name}: decoded whole, or cut with the coding's one line`, async () => {
      const client = await create(base);
      try {
        const read = async (path: string) => (await client.send("GET", path, {})).response;
        for (const path of ["/gzip", "/chain"]) {
          const response = await read(path);
          assert.equal(response?.body, RECORD, path);
          assert.equal(response?.cut, undefined, path);
          assert.equal(response?.received, RECORD.length, path);
          assert.equal(response?.headers["content-encoding"] !== undefined, true, "the header as it came");
        }
        assert.equal(
          (await read("/junk"))?.cut,
          "deflate body is corrupt: 2 bytes after the end of its coded data",
        );
        assert.match((await read("/corrupt"))?.cut ?? "", /^br body is corrupt: \S/);
        assert.match(
          (await read("/zstd"))?.cut ?? "",
          /^Content-Encoding "zstd" is not one petstore-conformance reads/,
        );
        assert.match(
          (await read("/bomb"))?.cut ?? "",
          /^the body is larger than the 1 MiB read of an answer that is not a list after decoding its Content-Encoding \(gzip\) \(stopped reading at \d+ decoded bytes, \d+ as they came\)$/,
        );
        // The connection it came on is still good for the next.
        assert.equal((await read("/gzip"))?.body, RECORD);
      } finally {
        client.close();
      }
    });
});
