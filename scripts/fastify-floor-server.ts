import { parseArgs } from "node:util";
import Fastify from "fastify";
import { loadContract } from "../contract/openapi.ts";
import { loadFixtureFile } from "../server/fixtures.ts";
import { createStore } from "../server/store.ts";

/**
 * The framework's floor for the benchmark: Fastify with one route that checks the key and sends the same
 * precomputed body, no plugins and no hooks. The mock cannot be faster than this while it runs on Fastify.
 */
const { values } = parseArgs({ options: { fixtures: { type: "string" }, port: { type: "string" } } });
if (!values.fixtures) throw new Error("--fixtures FILE is required");
const fixture = loadFixtureFile(values.fixtures, loadContract());
const expected = `Bearer ${fixture.apiKeys[0]}`;
const list = createStore(fixture.orders).listBody();

const app = Fastify({ logger: false });
app.get("/v1/store/orders", (request, reply) => {
  if (request.headers.authorization !== expected) return reply.code(401).send();
  return reply.header("content-type", "application/json; charset=utf-8").send(list);
});
await app.listen({ port: Number(values.port ?? 0), host: "127.0.0.1" });
process.stdout.write(
  `fastify floor listening on http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1\n`,
);
process.on("SIGTERM", () => app.close().then(() => process.exit(0)));
