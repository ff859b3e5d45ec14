import assert from "node:assert/strict";
import http, { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { RUN_OPTION_NAMES } from "../judging/setting-names.ts";
import { type AttemptTarget, HttpAttempt, type RequestToSend } from "../target/http-attempt.ts";
import { requestToSend } from "../target/http-client.ts";

describe("HttpAttempt", () => {
  let server: Server;
  const agent = new http.Agent({ keepAlive: false });

  before(async () => {
    server = createServer((request, response) => {
      // /silent never answers; /large sends more than the attempt's limit.
      if (request.url === "/silent") return;
      if (request.url === "/large") response.end(Buffer.alloc(64 * 1024, 0x20));
      else response.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  after(() => {
    agent.destroy();
    server.closeAllConnections();
    server.close();
  });

  const target = (limits: Partial<AttemptTarget> = {}): AttemptTarget => {
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return {
      url,
      hostname: url.hostname,
      requestOptions: {},
      timeoutMs: 60_000,
      deadlineMs: 60_000,
      maxBodyBytes: 1024 ** 3,
      names: RUN_OPTION_NAMES,
      decoderRoom: new MemoryBudget(64 * 1024 * 1024),
      request: (options, onAnswer) => http.request(options, onAnswer),
      ...limits,
    };
  };
  const get = (fullPath: string): RequestToSend =>
    requestToSend(new URL("http://127.0.0.1/"), {}, "GET", fullPath, {}, undefined);

  it("settles with the answer, when it was sent", async () => {
    const exchange = await new HttpAttempt(target(), get("/ok"), agent).exchange;
    assert.equal(exchange.response?.body, "{}");
    assert.equal(typeof exchange.sentAt, "number");
  });

  it("fails at its deadline without an answer, naming the setting and the limit hit", async () => {
    const exchange = await new HttpAttempt(target({ deadlineMs: 50 }), get("/silent"), agent).exchange;
    assert.equal(exchange.response, undefined);
    assert.match(exchange.error ?? "", /no complete answer within the 50 ms deadlineMs/);
    assert.equal(exchange.limit, "deadline");
  });

  it("cuts a body past maxBodyBytes, saying so, with the limit hit", async () => {
    const exchange = await new HttpAttempt(target({ maxBodyBytes: 1024 }), get("/large"), agent).exchange;
    assert.equal(exchange.limit, "max-body");
    assert.match(exchange.response?.cut ?? "", /^the body is larger than the 1 KiB maxBodyBytes allows/);
  });
});
