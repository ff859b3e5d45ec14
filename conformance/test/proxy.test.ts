import assert from "node:assert/strict";
import { Agent, createServer, request as httpRequest, type IncomingMessage } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { createProxy } from "proxy";
import { type MockProcess, startMockProcess } from "../../test-support/spawn-mock.ts";
import {
  PENDING_ID,
  SHIPPED_ID,
  startTarget,
  TARGET_KEY,
  type TargetBehaviour,
} from "../../test-support/target-server.ts";
import type { JudgedExchange } from "../proxy/judged-exchange.ts";
import { type ProxyOptions, type RunningProxy, runProxy } from "../proxy/run-proxy.ts";
import { renderHtml } from "../reports/html.ts";
import { renderJunit } from "../reports/junit.ts";
import { renderMarkdown } from "../reports/markdown.ts";
import { renderPretty } from "../reports/pretty.ts";
import type { Report } from "../reports/report.ts";
import { runConformance } from "../suite/runner.ts";
import { MOCK_KEY } from "./mock-ids.ts";
import { errorRecord, json, startScriptedUpstream } from "./scripted-upstream.ts";

async function withProxy<T>(
  upstream: string,
  options: Partial<ProxyOptions>,
  use: (proxy: RunningProxy, seen: JudgedExchange[]) => Promise<T>,
): Promise<{ result: T; report: Report }> {
  const seen: JudgedExchange[] = [];
  const proxy = await runProxy({
    upstream,
    port: 0,
    // No proxy from the machine's environment between the proxy and its upstream.
    env: {},
    ...options,
    onExchange: (judged) => seen.push(judged),
  });
  try {
    const result = await use(proxy, seen);
    return { result, report: await proxy.close() };
  } catch (error) {
    await proxy.close();
    throw error;
  }
}

function failedIds(report: Report): string[] {
  return [
    ...new Set(
      report.scenarios.flatMap((s) => s.checks.filter((c) => c.status === "failed").map((c) => c.id)),
    ),
  ].sort();
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe("the validating proxy in front of the project's mock", () => {
  let mock: MockProcess;
  before(async () => {
    mock = await startMockProcess(["--quiet"]);
  });
  after(() => mock.stop());

  it("a full conformance run through it finds no violation, and the coverage shows every documented status", async () => {
    const { result: suite, report } = await withProxy(mock.url, {}, (proxy) =>
      runConformance({
        baseUrl: proxy.url,
        apiKey: MOCK_KEY,
        hooks: "mock-control",
        session: "proxy-full-run",
      }),
    );
    assert.equal(suite.summary.failed, 0, "the suite itself passes through the proxy");
    assert.deepEqual(failedIds(report), []);
    assert.equal(report.summary.failed, 0);
    assert.ok(report.summary.passed > 100, `only ${report.summary.passed} checks`);
    const coverage = (report.coverage ?? []).map((row) => `${row.operation} ${row.status} ${row.seen > 0}`);
    assert.deepEqual(coverage, [
      "listOrders 200 true",
      "listOrders 401 true",
      "cancelOrder 204 true",
      "cancelOrder 401 true",
      "cancelOrder 404 true",
      "cancelOrder 409 true",
    ]);
    assert.equal(report.traffic?.judged, suite.requests);
    assert.equal(report.traffic?.upstreamFailures, 0);
    // The hook's control calls go outside /v1: forwarded, counted, not judged.
    assert.ok((report.traffic?.notJudged ?? 0) >= 1);
    const state = report.scenarios.find((s) => s.id === "state");
    assert.ok(state?.checks.some((c) => c.id === "state.cancel-once" && c.status === "passed"));
  });

  it("CORS preflights pass through to the upstream and are not judged", async () => {
    const { result, report } = await withProxy(mock.url, {}, async (proxy) => {
      const response = await fetch(`${proxy.url}/store/orders/2`, {
        method: "OPTIONS",
        headers: {
          origin: "http://app.example",
          "access-control-request-method": "DELETE",
          "access-control-request-headers": "authorization",
        },
      });
      return {
        status: response.status,
        allow: response.headers.get("access-control-allow-methods"),
        origin: response.headers.get("access-control-allow-origin"),
      };
    });
    assert.equal(result.status, 204);
    assert.match(result.allow ?? "", /DELETE/);
    assert.ok(result.origin === "*" || result.origin === "http://app.example");
    assert.equal(report.traffic?.notJudged, 1);
    assert.match(report.warnings.join("\n"), /CORS preflight/);
  });
});

/** The suite's own traffic, through a proxy, to a target server with this behaviour: the proxy's report. */
async function suiteThroughProxy(behaviour: TargetBehaviour): Promise<Report> {
  const target = await startTarget(behaviour);
  try {
    const { report } = await withProxy(target.url, {}, (proxy) =>
      runConformance({
        baseUrl: proxy.url,
        apiKey: TARGET_KEY,
        pendingOrderId: PENDING_ID,
        shippedOrderId: SHIPPED_ID,
      }),
    );
    return report;
  } finally {
    await target.close();
  }
}

describe("the proxy finds each defect of a broken server, naming the suite's check", () => {
  // The defect, and the checks that must fail when the suite's traffic goes through the proxy.
  const defects: Array<[string, TargetBehaviour, string[]]> = [
    ["a list that is not an array", { listNotArray: true }, ["listOrders.body"]],
    ["quantity as a string", { quantityAsString: true }, ["listOrders.body"]],
    // The exposed status also changes when the order is cancelled: a field changed by a cancel.
    [
      "orders that expose their status",
      { statusExposed: true },
      ["listOrders.no-status-field", "state.cancel-leaves-fields"],
    ],
    // The order with that id answers the suite's cancel of "9223372036854775808" with 409, as if it were an id.
    ["an id beyond int64", { idBeyondInt64: true }, ["cancelOrder.status", "listOrders.body"]],
    ["duplicate ids", { duplicateIds: true }, ["listOrders.unique-ids"]],
    [
      "text/plain on JSON bodies",
      { textContentType: true },
      ["cancelOrder.content-type", "listOrders.content-type"],
    ],
    [
      "Error records without a message",
      { errorWithoutMessage: true },
      ["cancelOrder.body", "listOrders.body"],
    ],
    [
      "an Error status unlike the HTTP status",
      { errorStatusMismatch: true },
      ["cancelOrder.error-status", "listOrders.error-status"],
    ],
    ["404 before 401", { lookupBeforeAuth: true }, ["cancelOrder.status"]],
    ["a 500 for malformed ids", { serverErrorOnMalformedId: true }, ["cancelOrder.status"]],
    ["Basic accepted", { acceptsBasic: true }, ["cancelOrder.status", "listOrders.status"]],
    ["403 instead of 401", { unauthorizedAs403: true }, ["cancelOrder.status", "listOrders.status"]],
    ["a 409 whose body is not an Error record", { conflictNonErrorBody: true }, ["cancelOrder.body"]],
    ["414 for a long id", { uriTooLongOnLongId: true }, ["cancelOrder.status"]],
    ["a cancel that leaves the order pending", { cancelWithoutTransition: true }, ["state.cancel-once"]],
    ["a paginating list", { paginates: true }, ["state.listed-orders-stay"]],
    [
      "a refused cancel that cancels",
      { cancelsWhenRefused: true, removeCancelled: true },
      ["state.refusals-change-nothing"],
    ],
  ];
  for (const [name, behaviour, expected] of defects) {
    it(name, async () => {
      assert.deepEqual(failedIds(await suiteThroughProxy(behaviour)), expected);
    });
  }

  it("a correct server that removes cancelled orders gets a note, not a failure", async () => {
    const report = await suiteThroughProxy({ removeCancelled: true });
    assert.deepEqual(failedIds(report), []);
    assert.match(
      (report.notes ?? []).join("\n"),
      /^order 9007199254740993 was cancelled \(#\d+ DELETE .*\) and is not in the later list .*the spec does not say whether cancelled orders stay listed/,
    );
    assert.ok(!report.warnings.some((warning) => warning.includes("9007199254740993")), "not a warning");
    // Said as a note in every report, never as "warning: note: …".
    const pretty = renderPretty(report, { color: false });
    assert.match(pretty, /^note: order 9007199254740993 was cancelled/m);
    for (const text of [pretty, renderMarkdown(report), renderHtml(report), renderJunit(report)])
      assert.doesNotMatch(text, /warning: note|⚠️ note/);
    assert.match(renderMarkdown(report), /^> ℹ️ note: order 9007199254740993 was cancelled/m);
    assert.match(renderHtml(report), /<li>note: order 9007199254740993 was cancelled/);
    assert.match(renderJunit(report), /<property name="note" value="order 9007199254740993 was cancelled/);
  });
});

describe("state findings from scripted traffic name both exchanges", () => {
  const ORDER_5 = '{"id":5,"petId":1,"quantity":1,"complete":false}';
  const ORDER_6 = '{"id":6,"petId":2,"quantity":1,"complete":false}';

  async function play(
    answers: Array<ReturnType<typeof json>>,
    requests: Array<{ method: string; path: string; key?: string; session?: string }>,
  ): Promise<{ report: Report; seen: JudgedExchange[] }> {
    let next = 0;
    const upstream = await startScriptedUpstream((got) =>
      got.method === "GET" && !got.rawHeaders.some((name) => name.toLowerCase() === "authorization")
        ? errorRecord(401, "unauthorized")
        : (answers[next++] ?? errorRecord(500, "script_ran_out")),
    );
    try {
      // The probe at start is the one request of the proxy's own; the script begins after it.
      const { result: seen, report } = await withProxy(upstream.url, {}, async (proxy, seen) => {
        for (const request of requests) {
          const headers: Record<string, string> = {
            ...(request.key ? bearer(request.key) : {}),
            ...(request.session ? { "x-mock-session": request.session } : {}),
          };
          await (
            await fetch(`${proxy.url}${request.path}`, { method: request.method, headers })
          ).arrayBuffer();
        }
        return seen;
      });
      return { report, seen };
    } finally {
      await upstream.close();
    }
  }

  it("a second 204 for the same order", async () => {
    const { report } = await play(
      [json(200, `[${ORDER_5}]`), { status: 204 }, { status: 204 }],
      [
        { method: "GET", path: "/store/orders", key: "k" },
        { method: "DELETE", path: "/store/orders/5", key: "k" },
        { method: "DELETE", path: "/store/orders/5", key: "k" },
      ],
    );
    const finding = findingsOf(report, "state.cancel-once");
    assert.equal(finding.length, 1);
    assert.match(
      finding[0] ?? "",
      // The model's finding on the order's live history, by the exchanges' numbers in the traffic.
      /^order 5 was cancelled twice: #2 DELETE \/v1\/store\/orders\/5 → 204 \([\d.]+–[\d.]+ ms\), #3 DELETE \/v1\/store\/orders\/5 → 204 \([\d.]+–[\d.]+ ms\)$/,
    );
  });

  it("a 204 for an order the proxy saw answered 409", async () => {
    const { report } = await play(
      [errorRecord(409, "order_not_cancellable"), { status: 204 }],
      [
        { method: "DELETE", path: "/store/orders/9223372036854775807", key: "k" },
        { method: "DELETE", path: "/store/orders/9223372036854775807", key: "k" },
      ],
    );
    const finding = findingsOf(report, "state.no-cancel-after-conflict");
    assert.equal(finding.length, 1);
    assert.match(
      finding[0] ?? "",
      /^order 9223372036854775807 was cancelled after a 409 said it could not be: #1 DELETE \/v1\/store\/orders\/9223372036854775807 → 409 \([\d.]+–[\d.]+ ms\), #2 DELETE \/v1\/store\/orders\/9223372036854775807 → 204 \([\d.]+–[\d.]+ ms\)$/,
    );
  });

  it("a 401 after which the list changed", async () => {
    const { report } = await play(
      [json(200, `[${ORDER_5},${ORDER_6}]`), errorRecord(401, "unauthorized"), json(200, `[${ORDER_5}]`)],
      [
        { method: "GET", path: "/store/orders", key: "k" },
        { method: "DELETE", path: "/store/orders/6", key: "wrong" },
        { method: "GET", path: "/store/orders", key: "k" },
      ],
    );
    assert.deepEqual(findingsOf(report, "state.refusals-change-nothing"), [
      "order 6 is missing from #3 GET /v1/store/orders → 200 after the refused #2 DELETE /v1/store/orders/6 → 401; it was listed by #1 GET /v1/store/orders → 200",
    ]);
  });

  it("a cancelled order listed with changed fields, and a listed order gone without a cancel", async () => {
    const changed = '{"id":5,"petId":1,"quantity":2,"complete":false}';
    const { report } = await play(
      [json(200, `[${ORDER_5},${ORDER_6}]`), { status: 204 }, json(200, `[${changed}]`)],
      [
        { method: "GET", path: "/store/orders", key: "k" },
        { method: "DELETE", path: "/store/orders/5", key: "k" },
        { method: "GET", path: "/store/orders", key: "k" },
      ],
    );
    assert.equal(findingsOf(report, "state.cancel-leaves-fields").length, 1);
    assert.match(findingsOf(report, "state.cancel-leaves-fields")[0] ?? "", /"quantity":1.*"quantity":2/);
    assert.deepEqual(findingsOf(report, "state.listed-orders-stay"), [
      "order 6, listed by #1 GET /v1/store/orders → 200, is missing from #3 GET /v1/store/orders → 200, and no cancel of it went through the proxy in between",
    ]);
  });

  it("keys and mock sessions are views of their own: one cancel in each is no second cancel", async () => {
    const { report } = await play(
      [{ status: 204 }, { status: 204 }, { status: 204 }],
      [
        { method: "DELETE", path: "/store/orders/5", key: "alice" },
        { method: "DELETE", path: "/store/orders/5", key: "bob" },
        { method: "DELETE", path: "/store/orders/5", key: "alice", session: "other" },
      ],
    );
    assert.deepEqual(failedIds(report), []);
  });

  it("rules the traffic never tested are reported as skipped, never as passed", async () => {
    const { report } = await play(
      [json(200, `[${ORDER_5}]`)],
      [{ method: "GET", path: "/store/orders", key: "k" }],
    );
    const state = report.scenarios.find((s) => s.id === "state");
    const statuses = Object.fromEntries(state?.checks.map((c) => [c.id, c.status]) ?? []);
    assert.deepEqual(statuses, {
      "state.cancel-once": "skipped",
      "state.no-cancel-after-conflict": "skipped",
      "state.listed-orders-stay": "skipped",
      "state.cancel-leaves-fields": "skipped",
      "state.refusals-change-nothing": "skipped",
      "state.cancel-answer-matches-state": "skipped",
      "state.absent-order-unlisted": "skipped",
      "state.stale-read": "skipped",
    });
    assert.equal(report.scenarios.find((s) => s.id === "cancelOrder")?.status, "skipped");
  });
});

function findingsOf(report: Report, id: string): string[] {
  return report.scenarios.flatMap((s) =>
    s.checks.filter((c) => c.id === id && c.status === "failed").map((c) => c.message),
  );
}

describe("never in the way", () => {
  it("forwards requests and answers byte for byte: ids above 2^53, a non-JSON body, headers in order", async () => {
    const listBody = '[ {"id": 9007199254740993, "petId":9223372036854775807 ,"quantity":1} ]';
    const binary = Buffer.from([0, 255, 1, 254, 10, 13, 0x7b]);
    const upstream = await startScriptedUpstream((got) =>
      got.url.startsWith("/v1/store/orders")
        ? {
            status: 200,
            headers: [
              ["Content-Type", "application/json"],
              ["X-Trace", "a"],
              ["x-trace", "b"],
            ],
            body: listBody,
          }
        : { status: 200, headers: [["Content-Type", "application/octet-stream"]], body: binary },
    );
    try {
      const send = (base: string, path: string, method: string, body?: string) =>
        new Promise<{ status: number; headers: string[]; body: Buffer }>((resolve, reject) => {
          const url = new URL(`${base}${path}`);
          const outgoing = httpRequest(
            {
              host: url.hostname,
              port: url.port,
              path: url.pathname + url.search,
              method,
              // As a raw list, Node sends exactly these, Host included.
              headers: [
                "Host",
                url.host,
                "Authorization",
                "Bearer k",
                "X-Custom",
                "1",
                "x-custom",
                "2",
                "Content-Type",
                "text/plain",
              ],
            },
            (incoming) => {
              const chunks: Buffer[] = [];
              incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
              incoming.on("end", () =>
                resolve({
                  status: incoming.statusCode ?? 0,
                  headers: incoming.rawHeaders,
                  body: Buffer.concat(chunks),
                }),
              );
            },
          );
          outgoing.on("error", reject);
          outgoing.end(body);
        });
      const endToEnd = (headers: string[]) =>
        headers
          .filter((_, index) => index % 2 === 0)
          .filter((name) => !/^(connection|keep-alive|date|transfer-encoding)$/i.test(name));
      const { result } = await withProxy(upstream.url, {}, async (proxy) => {
        const cases: Array<[string, string, string?]> = [
          ["/store/orders?x=1&y=%20z", "GET"],
          ["/../other/raw%2Fpath?q", "POST", "a body\u0000 with bytes"],
        ];
        for (const [path, method, body] of cases) {
          upstream.received.length = 0;
          const direct = await send(upstream.url, path, method, body);
          const proxied = await send(proxy.url, path, method, body);
          assert.equal(proxied.status, direct.status);
          assert.ok(proxied.body.equals(direct.body), `the body of ${method} ${path} is unchanged`);
          assert.deepEqual(endToEnd(proxied.headers), endToEnd(direct.headers));
          const [viaDirect, viaProxy] = upstream.received;
          assert.equal(viaProxy?.method, viaDirect?.method);
          assert.equal(viaProxy?.url, viaDirect?.url, "path and query as sent");
          assert.ok(viaProxy?.body.equals(viaDirect?.body ?? Buffer.alloc(0)), "the request body as sent");
          const withoutHost = (raw: string[] = []) => {
            const pairs: string[] = [];
            for (let i = 0; i < raw.length; i += 2)
              if (!/^(host|connection)$/i.test(raw[i] ?? "")) pairs.push(`${raw[i]}: ${raw[i + 1]}`);
            return pairs;
          };
          assert.deepEqual(withoutHost(viaProxy?.rawHeaders), withoutHost(viaDirect?.rawHeaders));
        }
        return undefined;
      });
      void result;
    } finally {
      await upstream.close();
    }
  });

  it("maps its /v1 onto the upstream's base path, whatever it is", async () => {
    const upstream = await startScriptedUpstream(() => json(200, "[]"));
    try {
      const { report } = await withProxy(upstream.url.replace(/\/v1$/, "/petstore/v1"), {}, async (proxy) => {
        await (await fetch(`${proxy.url}/store/orders?x=1`, { headers: bearer("k") })).arrayBuffer();
      });
      assert.equal(upstream.received.at(-1)?.url, "/petstore/v1/store/orders?x=1");
      assert.equal(report.traffic?.judged, 1);
    } finally {
      await upstream.close();
    }
  });

  it("keeps connections alive and serves concurrent clients", async () => {
    const upstream = await startScriptedUpstream(() => json(200, "[]"));
    try {
      await withProxy(upstream.url, {}, async (proxy) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 4 });
        let sockets = 0;
        agent.on("free", () => {});
        const created = agent.createConnection.bind(agent);
        agent.createConnection = ((...args: Parameters<typeof created>) => {
          sockets++;
          return created(...args);
        }) as typeof agent.createConnection;
        const one = () =>
          new Promise<number>((resolve, reject) => {
            const outgoing = httpRequest(
              `${proxy.url}/store/orders`,
              { agent, headers: bearer("k") },
              (incoming) => {
                incoming.resume();
                incoming.on("end", () => resolve(incoming.statusCode ?? 0));
              },
            );
            outgoing.on("error", reject);
            outgoing.end();
          });
        const statuses = await Promise.all(Array.from({ length: 60 }, one));
        agent.destroy();
        assert.deepEqual(new Set(statuses), new Set([200]));
        assert.ok(sockets <= 4, `${sockets} client connections for 60 requests`);
        assert.ok(upstream.connections <= 5, `${upstream.connections} upstream connections for 60 requests`);
      });
    } finally {
      await upstream.close();
    }
  });

  it("an upstream that goes away mid-run: the client gets a 502 Error record with the reason, counted and not judged", async () => {
    const target = await startTarget({});
    let targetOpen = true;
    try {
      const { result, report } = await withProxy(target.url, {}, async (proxy) => {
        const before = await fetch(`${proxy.url}/store/orders`, { headers: bearer(TARGET_KEY) });
        await before.arrayBuffer();
        await target.close();
        targetOpen = false;
        const after = await fetch(`${proxy.url}/store/orders`, { headers: bearer(TARGET_KEY) });
        return {
          before: before.status,
          status: after.status,
          type: after.headers.get("content-type"),
          body: await after.json(),
        };
      });
      assert.equal(result.before, 200);
      assert.equal(result.status, 502);
      assert.equal(result.type, "application/json");
      assert.equal(result.body.code, "upstream_unreachable");
      assert.equal(result.body.status, 502);
      assert.match(result.body.message, /ECONNREFUSED/);
      assert.equal(report.traffic?.upstreamFailures, 1);
      assert.equal(report.summary.failed, 0, "the proxy's own 502 is no deviation of the upstream");
      assert.match(
        report.warnings.join("\n"),
        /1 request got no whole answer from the upstream \(a 502 from the proxy, or an answer cut short after its head; not judged\)/,
      );
    } finally {
      if (targetOpen) await target.close();
    }
  });

  it("an upstream status outside 100-599, a malformed header or a short body: a 502 (or a cut answer) naming it, counted, and the proxy keeps serving", async () => {
    // Node's own server cannot write such a status line, so this upstream writes its bytes itself.
    const answers = [
      "HTTP/1.1 099 Weird\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n[]",
      "HTTP/1.1 600 Beyond\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n[]",
      // A header line that is no header, and a body shorter than its length: Node's parser refuses both.
      "HTTP/1.1 200 OK\r\nthis is no header\r\ncontent-length: 2\r\n\r\n[]",
      "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10\r\n\r\n[]",
    ];
    const raw = createNetServer((socket) => {
      let head = "";
      socket.on("data", (chunk: Buffer) => {
        head += chunk.toString("latin1");
        if (!head.includes("\r\n\r\n")) return;
        const keyed = /\r\nauthorization:/i.test(head);
        head = "";
        const answer = keyed ? answers.shift() : undefined;
        if (answer === undefined) {
          const line = keyed ? "200 OK" : "401 Unauthorized";
          socket.write(`HTTP/1.1 ${line}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n[]`);
          return;
        }
        socket.write(answer);
        // The short body's connection ends before the promised length.
        if (answer.includes("content-length: 10")) socket.end();
      });
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    try {
      const upstream = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/v1`;
      const { result, report } = await withProxy(upstream, {}, async (proxy) => {
        const got = [];
        for (let index = 0; index < 5; index++) {
          try {
            const response = await fetch(`${proxy.url}/store/orders`, { headers: bearer("k") });
            got.push({ status: response.status, body: await response.text() });
          } catch (error) {
            got.push({ status: 0, body: `cut: ${(error as Error).message}` });
          }
        }
        return got;
      });
      assert.deepEqual(
        result.map((answer) => answer.status),
        [502, 502, 502, 0, 200],
        "a status, a header or a length HTTP cannot carry, and the proxy still serves the next",
      );
      assert.match(result[2]?.body ?? "", /"code":"upstream_unreachable".*Parse Error/);
      assert.match(result[0]?.body ?? "", /"code":"upstream_invalid_answer".*status 99, outside 100-599/);
      assert.match(result[1]?.body ?? "", /status 600, outside 100-599/);
      assert.equal(report.traffic?.upstreamFailures, 4);
      assert.match(report.warnings.join("\n"), /status 99, outside 100-599/);
    } finally {
      raw.close();
    }
  });

  it("through an HTTP forward proxy every request goes to the upstream with its headers, whatever its path or target form", async () => {
    const upstream = await startScriptedUpstream(() => json(200, "[]"));
    const forward = createProxy(createServer());
    const asked: string[] = [];
    forward.on("request", (request: IncomingMessage) => asked.push(request.url ?? ""));
    await new Promise<void>((resolve) => forward.listen(0, "127.0.0.1", resolve));
    const forwardUrl = `http://127.0.0.1:${(forward.address() as AddressInfo).port}`;
    try {
      await withProxy(upstream.url, { proxy: forwardUrl }, async (proxy) => {
        const { host, port } = new URL(proxy.url);
        const send = (path: string) =>
          new Promise<number>((resolve, reject) => {
            const sent = httpRequest(
              {
                host: host.replace(/:\d+$/, ""),
                port,
                path,
                headers: { ...bearer("forwarded-key"), "x-trace": "t-1" },
              },
              (answer) => {
                answer.resume();
                answer.on("end", () => resolve(answer.statusCode ?? 0));
              },
            );
            sent.on("error", reject);
            sent.end();
          });
        assert.equal(await send("/v1/store/orders"), 200);
        await send("//evil.example:8080/x");
        // The absolute form names the upstream itself; one naming another host is refused, never forwarded.
        assert.equal(await send("http://evil.example:9/v1/store/orders?from=elsewhere"), 400);
        await send(`${new URL(upstream.url).origin}/v1/store/orders?from=absolute`);
      });
      const upstreamHost = new URL(upstream.url).host;
      // The first is the proxy's own probe at start, through the forward proxy as well.
      assert.deepEqual(asked.slice(1), [
        `http://${upstreamHost}/v1/store/orders`,
        `http://${upstreamHost}//evil.example:8080/x`,
        `http://${upstreamHost}/v1/store/orders?from=absolute`,
      ]);
      assert.deepEqual(
        upstream.received.slice(1).map((received) => received.url),
        ["/v1/store/orders", "//evil.example:8080/x", "/v1/store/orders?from=absolute"],
      );
      for (const received of upstream.received.slice(1)) {
        const headers = Object.fromEntries(
          received.rawHeaders.flatMap((value, index, all) =>
            index % 2 === 0 ? [[value.toLowerCase(), all[index + 1]]] : [],
          ),
        );
        assert.equal(headers.authorization, "Bearer forwarded-key");
        assert.equal(headers["x-trace"], "t-1");
        assert.equal(headers.host, upstreamHost);
      }
    } finally {
      forward.closeAllConnections();
      await new Promise<void>((resolve) => forward.close(() => resolve()));
      await upstream.close();
    }
  });

  it("an upstream that does not answer in time: a 502 naming the timeout, counted", async () => {
    // It answers the proxy's probe at start, then nothing.
    const hanging = createServer((request, response) => {
      if (!request.headers.authorization) response.writeHead(401).end();
    });
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    try {
      const upstream = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/v1`;
      const { result, report } = await withProxy(upstream, { timeoutMs: 200 }, async (proxy) => {
        const response = await fetch(`${proxy.url}/store/orders`, { headers: bearer("k") });
        return { status: response.status, body: await response.json() };
      });
      assert.equal(result.status, 502);
      assert.match(result.body.message, /no answer within 200 ms/);
      assert.equal(report.traffic?.upstreamFailures, 1);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });

  it("--errors answers a violating exchange with a 502 naming the violation, and passes the others", async () => {
    const target = await startTarget({ quantityAsString: true });
    try {
      const { result, report } = await withProxy(target.url, { errors: true }, async (proxy) => {
        const list = await fetch(`${proxy.url}/store/orders`, { headers: bearer(TARGET_KEY) });
        const refused = await fetch(`${proxy.url}/store/orders`);
        return { list: list.status, body: await list.json(), refused: refused.status };
      });
      assert.equal(result.list, 502);
      assert.equal(result.body.code, "contract_violation");
      assert.match(
        result.body.message,
        /^the upstream's answer \(200\) breaks the contract: listOrders\.body: .*quantity/,
      );
      assert.equal(result.refused, 401);
      assert.equal(report.traffic?.replaced, 1);
      assert.deepEqual(failedIds(report), ["listOrders.body"]);
    } finally {
      await target.close();
    }
  });
});

describe("bounds", () => {
  it("failures past the cap are counted, not kept", async () => {
    const upstream = await startScriptedUpstream(() => json(200, '{"not":"a list"}'));
    try {
      const { report } = await withProxy(upstream.url, {}, async (proxy) => {
        for (let i = 0; i < 110; i++)
          await (await fetch(`${proxy.url}/store/orders`, { headers: bearer("k") })).arrayBuffer();
      });
      const kept = report.scenarios
        .find((s) => s.id === "listOrders")
        ?.checks.filter((c) => c.status === "failed");
      assert.equal(kept?.length, 100);
      assert.equal(report.summary.failed, 110);
      assert.match(
        report.warnings.join("\n"),
        /listOrders\.body: the first 100 failures are shown with their exchanges, 10 more were counted/,
      );
    } finally {
      await upstream.close();
    }
  });
});
