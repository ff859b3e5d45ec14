import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { JSON_CONTENT_TYPE as json } from "../server/core/errors.ts";
import { wholeBytes } from "../server/core/exchange.ts";
import { loadComparisonWorld } from "./comparison-world.ts";

/**
 * The ceiling for the benchmark: bare node:http that checks the key and writes a body computed once at
 * start-up (the same bytes the mock serves). No routing, no framework, no logging: what no mock can beat.
 */
const world = await loadComparisonWorld();
const expected = `Bearer ${world.apiKeys[0]}`;
const list = Buffer.from(wholeBytes(world.store.listBody()));
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
server.listen(world.port, "127.0.0.1", () => {
  world.announce("ceiling", (server.address() as AddressInfo).port);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
