import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { loadContract } from "../contract/openapi.ts";
import { loadFixtureFile } from "../server/fixtures.ts";
import { createStore } from "../server/store.ts";

/**
 * The ceiling for the benchmark: bare node:http that checks the key and writes a body computed once at
 * start-up (the same bytes the mock serves). No routing, no framework, no logging: what no mock can beat.
 */
const { values } = parseArgs({ options: { fixtures: { type: "string" }, port: { type: "string" } } });
if (!values.fixtures) throw new Error("--fixtures FILE is required");
const fixture = loadFixtureFile(values.fixtures, loadContract());
const expected = `Bearer ${fixture.apiKeys[0]}`;
const list = createStore(fixture.orders).listBody();
const json = "application/json; charset=utf-8";
const unauthorized = Buffer.from(
  '{"code":"unauthorized","message":"The API key is not valid.","status":401}',
);
const notFound = Buffer.from('{"code":"order_not_found","message":"No such order.","status":404}');

// Content-Length is set explicitly: after writeHead without it, Node falls back to chunked encoding,
// which costs extra writes per response and would make this ceiling slower than a framework.
const server = createServer((request, response) => {
  if (request.headers.authorization !== expected) {
    response
      .writeHead(401, {
        "content-type": json,
        "content-length": unauthorized.length,
        "www-authenticate": 'Bearer realm="petstore"',
      })
      .end(unauthorized);
  } else if (request.method === "GET") {
    response.writeHead(200, { "content-type": json, "content-length": list.length }).end(list);
  } else {
    response.writeHead(404, { "content-type": json, "content-length": notFound.length }).end(notFound);
  }
});
server.listen(Number(values.port ?? 0), "127.0.0.1", () => {
  process.stdout.write(
    `ceiling listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/v1\n`,
  );
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
