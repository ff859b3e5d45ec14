import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import cors from "cors";
import FindMyWay from "find-my-way";
import { loadComparisonWorld } from "../scripts/comparison-world.ts";
import { createAuthenticator } from "../server/core/auth.ts";
import { JSON_CONTENT_TYPE as json } from "../server/core/errors.ts";
import { wholeBytes } from "../server/core/exchange.ts";

/**
 * What leaving Fastify would buy, for the benchmark: bare node:http with Fastify's router (find-my-way) and
 * the `cors` middleware configured as the mock's CORS is, one route with the mock's key check and the same
 * cached body. No logging, no 404/405 records, no body limits: a floor for that design, not a mock.
 */
const world = await loadComparisonWorld();
const authenticate = createAuthenticator(world.apiKeys);
const { store } = world;

const allowCors = cors({
  origin: "*",
  methods: ["GET", "HEAD", "DELETE"],
  allowedHeaders: ["Authorization", "Content-Type"],
  exposedHeaders: ["WWW-Authenticate", "Allow"],
  maxAge: 600,
});
const router = FindMyWay({ ignoreTrailingSlash: true });
router.on("GET", "/v1/store/orders", (request, response) => {
  if (!authenticate(request.headers.authorization).ok) {
    response.writeHead(401, { "content-length": 0 }).end();
    return;
  }
  const body = wholeBytes(store.listBody());
  response.writeHead(200, { "content-type": json, "content-length": body.length }).end(body);
});

const server = createServer((request, response) => {
  allowCors(request, response, () => router.lookup(request, response));
});
server.listen(world.port, "127.0.0.1", () => {
  world.announce("router floor", (server.address() as AddressInfo).port);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
