import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadContract } from "../contract/openapi.ts";
import { createMockCore } from "../server/core/mock.ts";
import { createSeed } from "../server/core/seed.ts";
import { loadComparisonWorld } from "./comparison-world.ts";

/**
 * What writing the core's answers straight to node:http would cost, for the benchmark: the mock's own
 * rules (routing, auth, CORS headers, journal) with no framework around them. No body limits, timeouts,
 * delays or faults: a floor for that design, not a mock.
 */
const world = loadComparisonWorld();
const core = createMockCore({
  seed: createSeed(world.orders),
  apiKeys: world.apiKeys,
  contract: loadContract(),
});

const server = createServer((request, response) => {
  const answer = core.handle({
    method: request.method ?? "GET",
    url: request.url ?? "/",
    headers: request.headers as Record<string, string | undefined>,
  });
  const body = answer.body === undefined || request.method === "HEAD" ? undefined : answer.body;
  const length =
    body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
  response.writeHead(answer.status, { ...answer.headers, "content-length": length }).end(body);
});
server.listen(world.port, "127.0.0.1", () => {
  world.announce("core floor", (server.address() as AddressInfo).port);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
