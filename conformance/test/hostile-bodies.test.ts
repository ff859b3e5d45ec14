import assert from "node:assert/strict";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { type IncomingMessage, request, type ServerResponse } from "node:http";
import { join } from "node:path";
import { describe, it } from "node:test";
import { brotliCompressSync, constants, deflateSync, gzipSync } from "node:zlib";
import { tempFolder } from "../../common/temp-folder.ts";
import { withHttpServer } from "../../test-support/http-server.ts";
import { runProxy } from "../proxy/run-proxy.ts";
import type { Report } from "../reports/report.ts";
import { runConformance } from "../suite/runner.ts";

const KEY = "hostile-key-4711";
const MiB = 1024 * 1024;

/** A deployment answering every request with `answer`; the proxy's start probe gets a plain 401. */
// The verdict on a large list comes after the client's last byte, as late as the machine's load makes it:
// these tests read verdicts, so the stop waits for them rather than cutting them off after its grace.
const JUDGED_WHOLE = { graceMs: 120_000 };

async function withUpstream<T>(
  answer: (request: IncomingMessage, response: ServerResponse) => void,
  body: (url: string) => Promise<T>,
): Promise<T> {
  return withHttpServer((request, response) => {
    if (request.headers.authorization === undefined) {
      response
        .writeHead(401, { "content-type": "application/json" })
        .end('{"code":"unauthorized","message":"a key is needed","status":401}');
      return;
    }
    answer(request, response);
  }, body);
}

/** The answer's status and its body's bytes as they came (node:http, which decodes nothing, unlike fetch). */
async function send(url: string, method = "GET"): Promise<{ status: number; bytes: number }> {
  const [incoming] = (await once(
    request(url, { method, headers: { authorization: `Bearer ${KEY}` } }).end(),
    "response",
  )) as [IncomingMessage];
  let bytes = 0;
  for await (const chunk of incoming) bytes += (chunk as Buffer).length;
  return { status: incoming.statusCode ?? 0, bytes };
}

const failures = (report: Report) =>
  report.scenarios.flatMap((scenario) =>
    scenario.checks.filter((check) => check.status === "failed").map((check) => check.message),
  );

// 64 MiB of one byte each: a few kilobytes compressed, as a bomb is.
const expanded = Buffer.alloc(64 * MiB, 0x20);
const BOMBS = {
  gzip: gzipSync(expanded, { level: 9 }),
  deflate: deflateSync(expanded, { level: 9 }),
  br: brotliCompressSync(expanded, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }),
};

describe("what the proxy decodes is bounded", { timeout: 120_000 }, () => {
  for (const [encoding, bomb] of Object.entries(BOMBS)) {
    it(`a ${encoding} bomb as an Error record is decoded up to 1 MiB and not judged; the proxy goes on serving`, async () => {
      await withUpstream(
        (_request, response) =>
          response
            .writeHead(404, { "content-type": "application/json", "content-encoding": encoding })
            .end(bomb),
        async (upstream) => {
          const har = join(tempFolder("bomb-"), "traffic.har");
          const proxy = await runProxy({ upstream, port: 0, env: {}, har });
          const first = await send(`${proxy.url}/store/orders/5`, "DELETE");
          assert.equal(first.status, 404);
          assert.equal(first.bytes, bomb.length, "the body goes on as it came, still compressed");
          assert.equal((await send(`${proxy.url}/store/orders/6`, "DELETE")).status, 404);
          const report = await proxy.close(JUDGED_WHOLE);
          assert.equal(report.traffic?.judged, 2);
          // Spaces are JSON's own: what was read of the body proves nothing, and the rest is not read.
          const messages = report.scenarios
            .flatMap((scenario) => scenario.checks.map((check) => check.message))
            .join("\n");
          assert.match(
            messages,
            /not judged: the body is larger than the 1 MiB read of an answer that is not a list \(stopped reading at \d+ bytes\)/,
          );
          const stoppedAt = Number(/stopped reading at (\d+) bytes/.exec(messages)?.[1]);
          assert.ok(stoppedAt <= 2 * MiB, `decoding stopped at ${stoppedAt} bytes, not at the bomb's 64 MiB`);
          const entries = JSON.parse(readFileSync(har, "utf8")).log.entries as Array<{
            comment?: string;
            response: { content: { size: number } };
          }>;
          assert.equal(entries.length, 2);
          assert.match(
            entries[0]?.comment ?? "",
            /^only the first 1048576 decoded bytes of the body are kept here: the body is larger than the 1 MiB read of an answer that is not a list/,
          );
        },
      );
    });
  }

  it("a bomb as a list is judged as it decodes, up to --max-body, and not past it", async () => {
    await withUpstream(
      (_request, response) =>
        response
          .writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
          .end(BOMBS.gzip),
      async (upstream) => {
        const proxy = await runProxy({ upstream, port: 0, env: {}, maxBodyBytes: 8 * MiB });
        assert.equal((await send(`${proxy.url}/store/orders`)).status, 200);
        const report = await proxy.close(JUDGED_WHOLE);
        assert.equal(report.traffic?.notJudged, 1);
        assert.match(report.warnings.join("\n"), /larger than the 8 MiB maxBodyBytes allows/);
      },
    );
  });

  it("a body that stops decoding half-way is failed as such; the proxy does not stop", async () => {
    const broken = Buffer.concat([BOMBS.gzip.subarray(0, 100), Buffer.from("not gzip at all".repeat(200))]);
    await withUpstream(
      (_request, response) => {
        // The bytes that do not decode arrive well before the body ends.
        response
          .writeHead(409, { "content-type": "application/json", "content-encoding": "gzip" })
          .write(broken);
        setTimeout(() => response.end("more"), 200);
      },
      async (upstream) => {
        const proxy = await runProxy({ upstream, port: 0, env: {} });
        assert.equal((await send(`${proxy.url}/store/orders/5`, "DELETE")).status, 409);
        assert.equal((await send(`${proxy.url}/store/orders/5`, "DELETE")).status, 409);
        const report = await proxy.close(JUDGED_WHOLE);
        assert.equal(report.traffic?.judged, 2);
        assert.match(failures(report).join("\n"), /does not decode as its Content-Encoding says/);
      },
    );
  });
});

describe("a body read as its Content-Encoding says, codings in a row and bytes past their end", () => {
  const list = Buffer.from(
    '[{"id":1,"petId":1,"quantity":1,"shipDate":"2026-11-02T10:00:00Z","complete":false}]',
  );
  const cases = [
    { coding: "br", body: Buffer.concat([brotliCompressSync(list), Buffer.from("junk")]), fails: true },
    { coding: "deflate", body: Buffer.concat([deflateSync(list), Buffer.from("junk")]), fails: true },
    { coding: "gzip, gzip", body: gzipSync(gzipSync(list)), fails: false },
    { coding: "gzip, br", body: brotliCompressSync(gzipSync(list)), fails: false },
    { coding: "identity, gzip", body: gzipSync(list), fails: false },
  ];
  for (const { coding, body, fails } of cases) {
    it(`${coding}${fails ? " with bytes after its coded data fails" : " passes"}, as curl reads it`, async () => {
      await withUpstream(
        (_request, response) =>
          response
            .writeHead(200, { "content-type": "application/json", "content-encoding": coding })
            .end(body),
        async (upstream) => {
          const proxy = await runProxy({ upstream, port: 0, env: {} });
          assert.equal((await send(`${proxy.url}/store/orders`)).status, 200);
          const report = await proxy.close(JUDGED_WHOLE);
          const found = failures(report).join("\n");
          if (fails) assert.match(found, /bytes after the end of its coded data/);
          else assert.equal(found, "");
        },
      );
    });
  }
});

describe("a hostile list ends the run with a verdict", { timeout: 60_000 }, () => {
  const nested = `[{"id":1,"petId":${"[".repeat(4000)}${"]".repeat(4000)}}]`;
  for (const [name, list, outcome, failure] of [
    [
      "nested 4,000 levels deep",
      nested,
      // Past the reader's bound, not past JSON's: not judged, saying which bound and its flag.
      "skipped",
      /not judged: the body goes past the judge's limit of 64 levels of nesting at byte 79, a bound of this reader and not of JSON \(readerLimits\.maxDepth raises it\)/,
    ],
    [
      "with ids 1e3 and 1.5",
      '[{"id":1e3},{"id":1.5}]',
      "failed",
      /orders\[1\] \(id 1\.5\): id must be integer/,
    ],
  ] as const) {
    it(`a list ${name}: the suite gives its verdict and the proxy judges it, neither stops`, async () => {
      await withUpstream(
        (request, response) => {
          if (request.method === "GET")
            response.writeHead(200, { "content-type": "application/json" }).end(list);
          else
            response
              .writeHead(404, { "content-type": "application/json" })
              .end('{"code":"not_found","message":"no such order","status":404}');
        },
        async (upstream) => {
          const report = await runConformance({ baseUrl: upstream, apiKey: KEY, env: {} });
          const listed = report.scenarios.find((scenario) => scenario.id === "list-orders");
          const body = listed?.checks.find((check) => check.id === "list-orders.list.body");
          assert.equal(body?.status, outcome);
          assert.match(body?.message ?? "", failure);
          const proxy = await runProxy({ upstream, port: 0, env: {} });
          assert.equal((await send(`${proxy.url}/store/orders`)).status, 200);
          assert.equal((await send(`${proxy.url}/store/orders`)).status, 200);
          const live = await proxy.close(JUDGED_WHOLE);
          assert.equal(live.traffic?.judged, 2);
          const messages = live.scenarios.flatMap((scenario) =>
            scenario.checks.filter((check) => check.status === outcome).map((check) => check.message),
          );
          assert.match(messages.join("\n"), failure);
        },
      );
    });
  }
});

describe("the proxy's memory across exchanges and its stop", { timeout: 60_000 }, () => {
  // A 3.4 MB list whose eighth order breaks a rule, past what a proxy of 2 MiB holds in memory.
  const orders = Array.from(
    { length: 40_000 },
    (_, index) =>
      `{"id":${index + 1},"petId":1,"quantity":${index === 7 ? '"2"' : 1},"shipDate":"2026-01-01T00:00:00Z","complete":false}`,
  );
  const violatingList = `[${orders.join(",")}]`;

  it("with --errors, an answer past what the proxy holds in memory waits in a file and is replaced", async () => {
    await withUpstream(
      (_request, response) =>
        response.writeHead(200, { "content-type": "application/json" }).end(violatingList),
      async (upstream) => {
        const proxy = await runProxy({ upstream, port: 0, env: {}, errors: true, maxHeldBytes: 2 * MiB });
        try {
          const answer = await send(`${proxy.url}/store/orders`);
          assert.equal(answer.status, 502, "held on disk until judged: the violation is replaced");
        } finally {
          const report = await proxy.close(JUDGED_WHOLE);
          assert.equal(report.traffic?.replaced, 1);
          assert.equal(report.traffic?.unreplaced, 0);
        }
      },
    );
  });

  it("a list past --max-memory is forwarded whole at once and judged in part, saying how far, never passed", async () => {
    const list = `[${Array.from({ length: 100_000 }, (_, index) => `{"id":${index + 1}}`).join(",")}]`;
    await withUpstream(
      (_request, response) => response.writeHead(200, { "content-type": "application/json" }).end(list),
      async (upstream) => {
        const proxy = await runProxy({ upstream, port: 0, env: {}, maxHeldBytes: 1 * MiB });
        const answer = await send(`${proxy.url}/store/orders`);
        assert.equal(answer.status, 200);
        assert.equal(answer.bytes, Buffer.byteLength(list), "the app gets the whole list");
        const report = await proxy.close(JUDGED_WHOLE);
        const checks = report.scenarios.flatMap((scenario) => scenario.checks);
        assert.deepEqual(
          checks.filter((check) => check.status === "failed"),
          [],
        );
        const body = checks.find((check) => check.id.endsWith(".body"));
        assert.equal(body?.status, "skipped", "a list judged in part is never passed");
        assert.match(
          body?.message ?? "",
          /not judged whole: over the memory budget \(1 MiB, maxHeldBytes\).*the first \d+ orders/,
        );
      },
    );
  });

  it("exchanges still in flight at the stop are in the report, cut off", async () => {
    let reached = 0;
    await withUpstream(
      (request, response) => {
        reached++;
        // The list starts and never ends; the cancel is never answered.
        if (request.method === "GET")
          response.writeHead(200, { "content-type": "application/json" }).write("[");
      },
      async (upstream) => {
        const proxy = await runProxy({ upstream, port: 0, env: {} });
        const answered = fetch(`${proxy.url}/store/orders`, { headers: { authorization: `Bearer ${KEY}` } })
          .then((response) => response.text())
          .catch((error: Error) => `failed: ${error.message}`);
        const cancel = fetch(`${proxy.url}/store/orders/2`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${KEY}` },
        }).catch((error: Error) => error);
        while (reached < 2) await new Promise((resolve) => setTimeout(resolve, 20));
        const report = await proxy.close({ graceMs: 200 });
        assert.equal(report.traffic?.exchanges, 2);
        assert.equal(report.traffic?.cutOff, 2);
        const warnings = report.warnings.join("\n");
        // The cancel got no answer to judge; what came of the list (its "[") was judged in part.
        assert.match(
          warnings,
          /1 request was forwarded without being judged \(cut off: still in flight when the proxy stopped\), e\.g\. DELETE \/v1\/store\/orders\/2/,
        );
        assert.equal(report.traffic?.notWhole, 2);
        assert.equal(report.traffic?.judgedInPart, 2);
        await answered;
        await cancel;
      },
    );
  });
});
