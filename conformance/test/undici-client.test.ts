import assert from "node:assert/strict";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import type { Exchange } from "../judging/exchange.ts";
import type { ListReading } from "../judging/identical-readings.ts";
import type { ListVerdict } from "../judging/list-judge.ts";
import type { ClientOptions, HttpClient } from "../target/http-client.ts";
import { createUndiciClient, undiciServes } from "../target/undici-client.ts";

const KEY = "secret-key-42";

/**
 * What the raw server writes for each path: every shape an answer can take on the wire, whole or not.
 * Written by hand, so that a cut or a never-ending answer is exactly that.
 */
const ANSWERS: Record<string, (socket: Socket) => void> = {
  "/v1/length": (socket) => socket.write(`${head(200, "content-length: 2")}{}`),
  "/v1/chunked": (socket) =>
    socket.write(`${head(200, "transfer-encoding: chunked")}3\r\n[1,\r\n2\r\n2]\r\n0\r\n\r\n`),
  "/v1/cut": (socket) => {
    socket.write(`${head(200, "content-length: 100")}{"partial":`);
    setTimeout(() => socket.destroy(), 20);
  },
  "/v1/cut-chunked": (socket) => {
    socket.write(`${head(200, "transfer-encoding: chunked")}a\r\n0123456789\r\n`);
    setTimeout(() => socket.destroy(), 20);
  },
  "/v1/never-ends": (socket) => socket.write(`${head(200, "content-length: 100")}{"a":`),
  "/v1/silent": () => {},
  "/v1/early-hints": (socket) =>
    socket.write(
      "HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n" +
        head(200, "content-length: 2") +
        "ok",
    ),
  "/v1/continue": (socket) => socket.write(`HTTP/1.1 100 Continue\r\n\r\n${head(204, "")}`),
  "/v1/switching": (socket) =>
    socket.write("HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n"),
  "/v1/large": (socket) => socket.write(head(200, "content-length: 4096") + " ".repeat(4096)),
  "/v1/busy": (socket) => socket.write(head(429, "retry-after: 0\r\ncontent-length: 0")),
  "/v1/repeated": (socket) =>
    socket.write(
      head(
        404,
        "retry-after: 5\r\nretry-after: 7\r\nx-many: a\r\nx-many: b\r\ncontent-type: application/json\r\ncontent-type: text/html\r\ncontent-length: 0",
      ),
    ),
  "/__control/orders?limit=1": (socket) =>
    socket.write(
      `${head(200, "content-length: 8\r\nX-Next-Cursor: 42\r\ncontent-type: application/json")}["é",1]`,
    ),
  "/v1/not-utf8": (socket) =>
    socket.write(Buffer.concat([Buffer.from(head(404, "content-length: 2")), Buffer.from([0xff, 0xfe])])),
};

function head(status: number, headers: string): string {
  return `HTTP/1.1 ${status} X\r\n${headers ? `${headers}\r\n` : ""}\r\n`;
}

describe("the undici client", () => {
  let server: Server;
  let base: URL;
  const seen: { path: string; head: string }[] = [];
  const busyCalls = { count: 0 };

  before(async () => {
    server = createServer((socket) => {
      let buffered = "";
      socket.on("error", () => {});
      socket.on("data", (data) => {
        buffered += data.toString("latin1");
        for (let end = buffered.indexOf("\r\n\r\n"); end !== -1; end = buffered.indexOf("\r\n\r\n")) {
          const request = buffered.slice(0, end);
          buffered = buffered.slice(end + 4);
          const path = request.split(" ")[1] ?? "";
          seen.push({ path, head: request });
          if (path === "/v1/busy" && busyCalls.count++ > 0)
            socket.write(`${head(200, "content-length: 2")}{}`);
          else (ANSWERS[path] ?? ((s: Socket) => s.write(head(404, "content-length: 0"))))(socket);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
  });
  after(() => server.close());

  const withClient = async (
    options: Partial<ClientOptions>,
    use: (client: HttpClient) => Promise<void>,
  ): Promise<void> => {
    const client = await createUndiciClient(base, {
      timeoutMs: 10_000,
      secretHeaders: new Set(["x-token"]),
      replaySecrets: new Map([
        [KEY, "API_KEY"],
        ["t0ken", "X_TOKEN"],
      ]),
      retry: { max: 2, maxWaitMs: 1000 },
      ...options,
    });
    try {
      await use(client);
    } finally {
      client.close();
    }
  };
  const send = (options: Partial<ClientOptions>, path: string, listJudge?: () => ListReading) => {
    let exchange: Exchange | undefined;
    return withClient(options, async (client) => {
      exchange = await client.send("GET", path, { authorization: `Bearer ${KEY}` }, { listJudge });
    }).then(() => exchange as Exchange);
  };

  it("reads an answer with a Content-Length, and one chunked, whole", async () => {
    const length = await send({}, "/length");
    assert.equal(length.response?.status, 200);
    assert.equal(length.response?.body, "{}");
    assert.equal(length.response?.cut, undefined);
    const chunked = await send({}, "/chunked");
    assert.equal(chunked.response?.body, "[1,2]");
    assert.equal(chunked.response?.received, 5);
  });

  it("judges a 200 as it streams when a list judge is given, keeping the start for reports", async () => {
    const written: string[] = [];
    const verdict = { orders: new Set() } as unknown as ListVerdict;
    const judge = (): ListReading => ({
      write: (chunk) => written.push(Buffer.from(chunk).toString()),
      end: () => verdict,
      abandon: () => {},
    });
    const exchange = await send({}, "/chunked", judge);
    assert.equal(written.join(""), "[1,2]");
    assert.equal(exchange.response?.list, verdict);
    assert.equal(exchange.response?.body, "[1,2]");
  });

  it("ends a body cut mid-way, with a length or chunked, as one cut answer naming the bytes that came", async () => {
    const cut = await send({}, "/cut");
    assert.equal(cut.response?.status, 200);
    assert.match(
      cut.response?.cut ?? "",
      /^the body broke off after 11 bytes of the 100 its Content-Length announced/,
    );
    const chunked = await send({}, "/cut-chunked");
    assert.match(chunked.response?.cut ?? "", /^the body broke off after 10 bytes \(/);
    for (const exchange of [cut, chunked]) assert.doesNotMatch(exchange.response?.cut ?? "", /\n/);
  });

  it("ends an answer that never completes at the deadline, and one that never starts at the timeout", async () => {
    const endless = await send({ deadlineMs: 200 }, "/never-ends");
    assert.equal(endless.limit, "deadline");
    assert.match(
      endless.response?.cut ?? "",
      /did not complete within the 200 ms deadlineMs \(5 bytes of its body came\)/,
    );
    const silent = await send({ timeoutMs: 200 }, "/silent");
    assert.equal(silent.response, undefined);
    assert.equal(silent.error, "no response within 200 ms");
    const deadline = await send({ deadlineMs: 200 }, "/silent");
    assert.equal(deadline.limit, "deadline");
    assert.match(deadline.error ?? "", /^no complete answer within the 200 ms deadlineMs$/);
  });

  it("skips informational answers to the final one, and fails a 100 or an unasked 101 as one line", async () => {
    const hinted = await send({}, "/early-hints");
    assert.equal(hinted.response?.status, 200);
    assert.equal(hinted.response?.body, "ok");
    const expected = { "/continue": /100 Continue/, "/switching": /switched protocols \(101\)/ };
    for (const [path, wording] of Object.entries(expected)) {
      const exchange = await send({}, path);
      assert.equal(exchange.response, undefined, path);
      assert.match(exchange.error ?? "", wording, path);
      assert.doesNotMatch(exchange.error ?? "", /\n/, path);
    }
  });

  it("stops reading past maxBodyBytes, saying so", async () => {
    const exchange = await send({ maxBodyBytes: 1024 }, "/large");
    assert.equal(exchange.limit, "max-body");
    assert.match(exchange.response?.cut ?? "", /^the body is larger than the 1 KiB maxBodyBytes allows/);
  });

  it("waits out a 429 and sends again", async () => {
    busyCalls.count = 0;
    const exchange = await send({}, "/busy");
    assert.equal(exchange.response?.status, 200);
    assert.equal(exchange.retries, 1);
  });

  it("reads repeated headers as node:http does: the first of a one-valued one, the others joined", async () => {
    const exchange = await send({}, "/repeated");
    assert.equal(exchange.response?.headers["retry-after"], "5");
    // Content-Type is kept whole, as the node:http client reads it too: a second media type is never dropped.
    assert.equal(exchange.response?.headers["content-type"], "application/json, text/html");
    assert.equal(exchange.response?.headers["x-many"], "a, b");
  });

  it("records the request with its secrets masked, and the replay naming their variables", async () => {
    let exchange: Exchange | undefined;
    await withClient({ commonHeaders: { "x-token": "t0ken" } }, async (client) => {
      exchange = await client.send("GET", "/not-utf8", { authorization: `Bearer ${KEY}` });
    });
    const recorded = exchange?.request;
    assert.equal(recorded?.path, "/v1/not-utf8");
    assert.doesNotMatch(JSON.stringify(recorded), /secret-key-42|t0ken/);
    assert.equal(recorded?.headers["x-token"], "***");
    assert.match(JSON.stringify(recorded?.replay), /API_KEY.*X_TOKEN|X_TOKEN.*API_KEY/);
    assert.match(exchange?.response?.notUtf8 ?? "", /./);
    assert.ok(seen.some((request) => request.head.includes(`Bearer ${KEY}`)));
  });

  it("fails a request it cannot send, and a refused connection, as one line each", async () => {
    let bad: Exchange | undefined;
    await withClient({}, async (client) => {
      bad = await client.send("GET", "/length", { "x-bad": "a\r\nb" });
    });
    assert.match(bad?.error ?? "", /^the request could not be sent: [^\n]+$/);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await createUndiciClient(new URL(`http://127.0.0.1:${port}/v1`), { timeoutMs: 2000 });
    const exchange = await refused.send("GET", "/store/orders", {});
    refused.close();
    assert.equal(exchange.errorCode, "ECONNREFUSED");
    assert.match(exchange.error ?? "", /^ECONNREFUSED: [^\n]+$/);
  });

  it("sends every path byte for byte, on kept-alive connections", async () => {
    const pathChars = fc.constantFrom(..."abcXYZ019-._~%2e/;:@!$&'()*+,=?#[]\\^`{|}\"<>".split(""));
    await withClient({}, async (client) => {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: pathChars, minLength: 1, maxLength: 40 }), async (tail) => {
          const path = `/${tail}`;
          const exchange = await client.send("GET", path, {});
          assert.equal(exchange.response?.status, 404);
          assert.equal(seen.at(-1)?.path, `/v1${path}`);
        }),
        { numRuns: 200 },
      );
    });
  });

  it("answers the hooks' control calls from its pool as fetch would, other calls by fetch itself", async () => {
    const client = await createUndiciClient(base, { timeoutMs: 10_000 });
    try {
      const control = await client.fetch(`${base.origin}/__control/orders`, {
        method: "POST",
        headers: { "x-mock-session": "s" },
        body: '{"remove":[]}',
      });
      assert.equal(control.status, 404);
      assert.equal(await control.text(), "");
      const sent = seen.at(-1);
      assert.equal(sent?.path, "/__control/orders");
      assert.match(sent?.head ?? "", /^x-mock-session: s$/m);
      const other = await client.fetch(`${base.origin}/v1/length`);
      assert.equal(await other.text(), "{}");
    } finally {
      client.close();
    }
  });

  it("sends the control client's calls on its pool as its transport, other calls by fetch", async () => {
    const client = await createUndiciClient(base, { timeoutMs: 10_000 });
    try {
      const answer = await client.controlTransport({
        method: "get",
        url: `${base.origin}/__control/orders?limit=1`,
        headers: { "x-mock-session": "s" },
      });
      assert.deepEqual([answer.status, answer.text], [200, '["é",1]']);
      assert.equal(answer.headers.get("x-next-cursor"), "42");
      assert.equal(answer.headers.get("X-Next-Cursor"), "42");
      assert.equal(answer.headers.get("x-total-count"), null);
      const sent = seen.at(-1);
      assert.match(sent?.head ?? "", /^GET \/__control\/orders\?limit=1 HTTP\/1.1$/m);
      assert.match(sent?.head ?? "", /^x-mock-session: s$/m);
      const other = await client.controlTransport({
        method: "GET",
        url: `${base.origin}/v1/length`,
        headers: {},
      });
      assert.deepEqual([other.status, other.text], [200, "{}"]);
      await assert.rejects(
        client.controlTransport({ method: "GET", url: "http://127.0.0.1:1/__control/orders", headers: {} }),
        /^TypeError: cannot reach the mock's control API: GET http:\/\/127\.0\.0\.1:1\/__control\/orders failed/,
      );
    } finally {
      client.close();
    }
  });

  it("serves plain HTTP straight to the target only", () => {
    assert.equal(undiciServes(new URL("http://a/v1"), {}), true);
    assert.equal(undiciServes(new URL("https://a/v1"), {}), false);
    assert.equal(undiciServes(new URL("http://a/v1"), { proxy: new URL("http://p:3128") }), false);
    for (const name of ["Keep-Alive", "Upgrade", "Transfer-Encoding", "Expect", "Connection"])
      assert.equal(undiciServes(new URL("http://a/v1"), { commonHeaders: { [name]: "x" } }), false, name);
    assert.equal(undiciServes(new URL("http://a/v1"), { commonHeaders: { "X-Tenant": "a" } }), true);
  });
});
