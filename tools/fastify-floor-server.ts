import Fastify from "fastify";
import { loadComparisonWorld } from "../scripts/comparison-world.ts";
import { JSON_CONTENT_TYPE } from "../server/core/errors.ts";
import { wholeBytes } from "../server/core/exchange.ts";

/**
 * The framework's floor for the benchmark: Fastify with one route that checks the key and sends the same
 * precomputed body, no plugins and no hooks. The mock cannot be faster than this while it runs on Fastify.
 */
const world = await loadComparisonWorld();
const expected = `Bearer ${world.apiKeys[0]}`;
const list = Buffer.from(wholeBytes(world.store.listBody()));

const app = Fastify({ logger: false });
app.get("/v1/store/orders", (request, reply) => {
  if (request.headers.authorization !== expected) return reply.code(401).send();
  return reply.header("content-type", JSON_CONTENT_TYPE).send(list);
});
await app.listen({ port: world.port, host: "127.0.0.1" });
world.announce("fastify floor", (app.server.address() as { port: number }).port);
process.on("SIGTERM", () => app.close().then(() => process.exit(0)));
