import assert from "node:assert/strict";
import { once } from "node:events";
import { type IncomingMessage, request, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { describe, it } from "node:test";
import { type Answer, withHttpServer } from "../../test-support/http-server.ts";
import { runProxy } from "../proxy/run-proxy.ts";
import { gateExitCode } from "../reports/outcome.ts";
import type { CheckResult, Report } from "../reports/report.ts";
import { runConformance } from "../suite/runner.ts";

// The suite and the proxy judge answers of a real server, sent as odd as HTTP lets them be.

const KEY = "checks-key-4711";
// The verdicts come after the client's last byte: the proxy's stop waits for them.
const JUDGED_WHOLE = { graceMs: 60_000 };

/** Answers as the spec says, but for the Content-Type lines each answer carries (an array: one line each). */
function answeringWith(contentType: string | string[]): Answer {
  return (incoming, response) => {
    response.setHeader("content-type", contentType);
    if (incoming.headers.authorization !== `Bearer ${KEY}`) {
      response.writeHead(401).end('{"code":"unauthorized","message":"a key is needed","status":401}');
      return;
    }
    if (incoming.method === "GET") response.writeHead(200).end('[{"id":1,"petId":2,"quantity":1}]');
    else response.writeHead(404).end('{"code":"not_found","message":"no such order","status":404}');
  };
}

async function send(url: string, method = "GET", key = KEY): Promise<number> {
  const [incoming] = (await once(
    request(url, { method, headers: { authorization: `Bearer ${key}` } }).end(),
    "response",
  )) as [IncomingMessage];
  incoming.resume();
  await once(incoming, "end");
  return incoming.statusCode ?? 0;
}

const checksOf = (report: Report, kind: string): CheckResult[] =>
  report.scenarios.flatMap((scenario) => scenario.checks.filter((check) => check.id.endsWith(`.${kind}`)));

/** The suite's and the proxy's checks of this kind, on answers to a listing and a cancel, keyed and not. */
async function judgedBoth(answer: Answer, kind: string): Promise<Judged> {
  return withHttpServer(answer, async (upstream) => {
    const suite = await runConformance({ baseUrl: upstream, apiKey: KEY, env: {} });
    const proxy = await runProxy({ upstream, port: 0, env: {} });
    await send(`${proxy.url}/store/orders`);
    await send(`${proxy.url}/store/orders/5`, "DELETE");
    await send(`${proxy.url}/store/orders`, "GET", "wrong-key");
    const live = await proxy.close(JUDGED_WHOLE);
    return {
      suite: checksOf(suite, kind),
      proxy: checksOf(live, kind),
      exits: { suite: gateExitCode(suite), proxy: gateExitCode(live) },
    };
  });
}

interface Judged {
  suite: CheckResult[];
  proxy: CheckResult[];
  /** Each command's exit code for its report. */
  exits: { suite: number; proxy: number };
}

describe("an answer's Content-Type, sent on several lines", { timeout: 120_000 }, () => {
  it("two different media types make the answer's unknown: the check fails, naming both", async () => {
    const { suite, proxy } = await judgedBoth(
      answeringWith(["application/json", "text/html"]),
      "content-type",
    );
    for (const [who, checks] of Object.entries({ suite, proxy })) {
      assert.ok(checks.length >= 2, `${who} judged the Content-Type of a listing and a cancel`);
      for (const check of checks) {
        assert.equal(check.status, "failed", `${who}: ${check.id}: ${check.message}`);
        assert.match(
          check.message ?? "",
          /a JSON body needs one JSON Content-Type, got 2 media types \("application\/json", "text\/html"\): Content-Type carries one \(RFC 9110 §8\.3\), so the body's media type is unknown$/,
        );
      }
    }
  });

  it("the JSON type sent second is seen as well as first", async () => {
    const { suite, proxy } = await judgedBoth(
      answeringWith(["text/html", "application/json"]),
      "content-type",
    );
    assert.ok(suite.length >= 2 && proxy.length >= 2);
    for (const check of [...suite, ...proxy]) assert.match(check.message ?? "", /got 2 media types/);
  });

  for (const lines of [
    ["application/json; charset=utf-8", "application/JSON; charset=UTF-8"],
    // One media type with other parameters is one still, as a browser reads it.
    ["application/json; charset=utf-8", "application/json"],
  ])
    it(`the same media type on two lines is read as one, and passes (${lines.join(" / ")})`, async () => {
      const { suite, proxy } = await judgedBoth(answeringWith(lines), "content-type");
      for (const [who, checks] of Object.entries({ suite, proxy })) {
        assert.ok(checks.length >= 2, `${who} judged the Content-Type of a listing and a cancel`);
        for (const check of checks)
          assert.equal(check.status, "passed", `${who}: ${check.id}: ${check.message}`);
      }
    });
});

const MiB = 1024 * 1024;
/** An Error record of about 2 MiB, valid: the spec sets no size limit (§8). */
const LARGE_ERROR = `{"code":"not_found","message":"${"x".repeat(2 * MiB)}","status":404}`;

/** Answers as the spec says, but a cancel's 404 carries `body`. */
function cancelAnswering(body: string): Answer {
  return (incoming, response) => {
    response.setHeader("content-type", "application/json");
    if (incoming.headers.authorization !== `Bearer ${KEY}`)
      response.writeHead(401).end('{"code":"unauthorized","message":"a key is needed","status":401}');
    else if (incoming.method === "GET") response.writeHead(200).end("[]");
    else response.writeHead(404).end(body);
  };
}

/** The body checks of the cancels' answers, from the suite and the proxy. */
async function cancelBodies(body: string): Promise<Judged> {
  const { suite, proxy, exits } = await judgedBoth(cancelAnswering(body), "body");
  // The listings' bodies are whole and pass; every other body is a cancel's 404.
  const ofCancels = (checks: CheckResult[]) => checks.filter((check) => check.status !== "passed");
  return { suite: ofCancels(suite), proxy: ofCancels(proxy), exits };
}

describe("an answer that is no list, past the 1 MiB read of such answers", { timeout: 120_000 }, () => {
  it("a valid Error record of 2 MiB is not judged, saying why: never failed for its size", async () => {
    const { suite, proxy, exits } = await cancelBodies(LARGE_ERROR);
    assert.deepEqual(exits, { suite: 2, proxy: 2 }, "neither a pass nor a failure");
    for (const check of suite) assert.equal(check.notJudged, true, check.id);
    for (const [who, checks] of Object.entries({ suite, proxy })) {
      assert.ok(checks.length >= 1, `${who} judged a cancel's body`);
      for (const check of checks) {
        assert.equal(check.status, "skipped", `${who}: ${check.id}: ${check.message}`);
        assert.match(
          check.message ?? "",
          /not judged: the body is larger than the 1 MiB read of an answer that is not a list \(stopped reading at \d+ bytes\); its first 1048576 bytes break nothing the spec says, and no setting reads more of such an answer\)?$/,
          `${who}: ${check.id}`,
        );
      }
    }
  });

  it("what its first bytes prove fails as such: not JSON, or no Error record whatever follows", async () => {
    const proofs = {
      [`{"code": nope${" ".repeat(2 * MiB)}`]:
        /^(#\d+ \S+ \S+ → 404: )?the body is not valid JSON: .* at byte 9 \(judged on its first 1048576 bytes: the body is larger than the 1 MiB read of an answer that is not a list/,
      [`["${"x".repeat(2 * MiB)}"]`]:
        /^(#\d+ \S+ \S+ → 404: )?does not match openapi\.yaml: \(body\) must be object \(judged on its first 1048576 bytes: /,
      [`${"x".repeat(2 * MiB)}`]:
        /^(#\d+ \S+ \S+ → 404: )?the body is not valid JSON: .* at byte 0 \(judged on its first/,
    };
    for (const [body, proof] of Object.entries(proofs)) {
      const { suite, proxy, exits } = await cancelBodies(body);
      assert.deepEqual(exits, { suite: 1, proxy: 1 });
      for (const [who, checks] of Object.entries({ suite, proxy })) {
        assert.ok(checks.length >= 1, `${who} judged a cancel's body`);
        for (const check of checks) {
          assert.equal(check.status, "failed", `${who}: ${check.id}: ${check.message}`);
          assert.match(check.message ?? "", proof, `${who}: ${check.id}`);
        }
      }
    }
  });

  it("a character cut by the end of what is read is no fault of the body", async () => {
    // 'é' is two bytes: the first falls on the last byte read.
    const body = `{"code":"not_found","message":"${"x".repeat(MiB - 31)}${"é".repeat(MiB)}","status":404}`;
    const { suite, proxy } = await cancelBodies(body);
    for (const check of [...suite, ...proxy]) assert.equal(check.status, "skipped", check.message);
  });
});

/** A raw server: GET lists nothing, DELETE answers `cancelAnswer` (bytes as they go on the wire), then closes. */
async function withRawUpstream<T>(cancelAnswer: string, body: (url: string) => Promise<T>): Promise<T> {
  const server = createTcpServer((socket) => {
    let buffered = "";
    socket.on("error", () => {});
    socket.on("data", (data) => {
      buffered += data.toString("latin1");
      for (let end = buffered.indexOf("\r\n\r\n"); end !== -1; end = buffered.indexOf("\r\n\r\n")) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        const json = (status: number, text: string) =>
          `HTTP/1.1 ${status} X\r\ncontent-type: application/json\r\ncontent-length: ${text.length}\r\n\r\n${text}`;
        if (!head.toLowerCase().includes(`authorization: bearer ${KEY}`))
          socket.write(json(401, '{"code":"unauthorized","message":"a key is needed","status":401}'));
        else if (head.startsWith("GET ")) socket.write(json(200, "[]"));
        else socket.end(cancelAnswer);
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  try {
    return await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The no-body checks of the suite and the proxy, on a server whose every cancel answers `cancelAnswer`. */
async function noBodyChecks(cancelAnswer: string): Promise<CheckResult[]> {
  return withRawUpstream(cancelAnswer, async (upstream) => {
    const suite = await runConformance({ baseUrl: upstream, apiKey: KEY, env: {} });
    const proxy = await runProxy({ upstream, port: 0, env: {} });
    await send(`${proxy.url}/store/orders/5`, "DELETE");
    const live = await proxy.close(JUDGED_WHOLE);
    const suiteChecks = checksOf(suite, "no-body");
    const proxyChecks = checksOf(live, "no-body");
    assert.ok(suiteChecks.length >= 1 && proxyChecks.length >= 1, "both judged a 204");
    return [...suiteChecks, ...proxyChecks];
  });
}

describe("a 204 whose head announces a body", { timeout: 120_000 }, () => {
  // HTTP reads no body after a 204's head: the bytes a server sends there reach no client as one.
  it("fails, naming the header, whether a length or a chunked coding announces it", async () => {
    const announcing = {
      "content-length: 2": "HTTP/1.1 204 X\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}",
      "transfer-encoding: chunked":
        "HTTP/1.1 204 X\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    };
    for (const [header, answer] of Object.entries(announcing))
      for (const check of await noBodyChecks(answer)) {
        assert.equal(check.status, "failed", `${header}: ${check.id}: ${check.message}`);
        assert.match(
          check.message ?? "",
          new RegExp(
            `204 must carry no body, yet its head announces one \\(${header}\\), which RFC 911[02] §\\d\\.\\d forbids on a 204`,
          ),
        );
      }
  });

  it("a 204 with none, or a length of 0, passes", async () => {
    for (const answer of [
      "HTTP/1.1 204 X\r\nconnection: close\r\n\r\n",
      "HTTP/1.1 204 X\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
    ])
      for (const check of await noBodyChecks(answer)) assert.equal(check.status, "passed", check.message);
  });
});

/** Answers as the spec says, but for the listing: `list` writes it. */
function listAnswering(list: (response: ServerResponse) => void): Answer {
  return (incoming, response) => {
    if (incoming.headers.authorization !== `Bearer ${KEY}`)
      response
        .writeHead(401, { "content-type": "application/json" })
        .end('{"code":"unauthorized","message":"a key is needed","status":401}');
    else if (incoming.method === "GET") list(response);
    else
      response
        .writeHead(404, { "content-type": "application/json" })
        .end('{"code":"not_found","message":"no such order","status":404}');
  };
}

const listChecks = (report: Report) =>
  report.scenarios.find((scenario) => scenario.id === "list-orders")?.checks ?? [];

describe("a body the run's own limits cut", { timeout: 120_000 }, () => {
  it("a list still coming at --deadline is not judged, saying which limit to raise: the spec sets no time", async () => {
    const dripping = listAnswering((response) => {
      response.writeHead(200, { "content-type": "application/json" }).write("[");
      const drip = setInterval(() => response.write(" "), 50);
      response.on("close", () => clearInterval(drip));
    });
    const report = await withHttpServer(dripping, (baseUrl) =>
      runConformance({ baseUrl, apiKey: KEY, env: {}, deadlineMs: 500 }),
    );
    const body = listChecks(report).find((check) => check.id === "list-orders.list.body");
    assert.equal(body?.status, "skipped", body?.message);
    assert.equal(body?.notJudged, true);
    assert.match(body?.message ?? "", /; raise deadlineMs to judge it$/);
    assert.equal(
      report.summary.failed,
      0,
      JSON.stringify(report.scenarios.flatMap((s) => s.checks).filter((c) => c.status === "failed")),
    );
    assert.equal(gateExitCode(report), 2);
  });

  it("the Content-Type of a list past --max-body is judged all the same: its head came whole", async () => {
    const orders = Array.from({ length: 100 }, (_, at) => `{"id":${at + 1},"petId":1,"quantity":1}`);
    const html = listAnswering((response) =>
      response.writeHead(200, { "content-type": "text/html" }).end(`[${orders.join(",")}]`),
    );
    const report = await withHttpServer(html, (baseUrl) =>
      runConformance({ baseUrl, apiKey: KEY, env: {}, maxBodyBytes: 1024 }),
    );
    const checks = listChecks(report);
    const contentType = checks.find((check) => check.id === "list-orders.list.content-type");
    assert.equal(contentType?.status, "failed");
    assert.equal(contentType?.message, 'a JSON body needs a JSON Content-Type, got "text/html"');
    assert.equal(checks.find((check) => check.id === "list-orders.list.body")?.notJudged, true);
    assert.equal(gateExitCode(report), 1);
  });
});
