import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import cors from "cors";
import FindMyWay from "find-my-way";
import { loadContract } from "../contract/openapi.ts";
import { createAuthenticator } from "../server/auth.ts";
import { loadFixtureFile } from "../server/fixtures.ts";
import { createStore } from "../server/store.ts";

/**
 * What leaving Fastify would buy, for the benchmark: bare node:http with Fastify's router (find-my-way) and
 * the `cors` middleware configured as the mock's CORS is, one route with the mock's key check and the same
 * cached body. No logging, no 404/405 records, no body limits: a floor for that design, not a mock.
 */
const { values } = parseArgs({ options: { fixtures: { type: "string" }, port: { type: "string" } } });
if (!values.fixtures) throw new Error("--fixtures FILE is required");
const fixture = loadFixtureFile(values.fixtures, loadContract());
const authenticate = createAuthenticator(fixture.apiKeys);
const store = createStore(fixture.orders);
const json = "application/json; charset=utf-8";

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
  const body = store.listBody();
  response.writeHead(200, { "content-type": json, "content-length": body.length }).end(body);
});

const server = createServer((request, response) => {
  allowCors(request, response, () => router.lookup(request, response));
});
server.listen(Number(values.port ?? 0), "127.0.0.1", () => {
  process.stdout.write(
    `router floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/v1\n`,
  );
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
