import { parseArgs } from "node:util";
import { BUNDLED_FIXTURES } from "../server/options.ts";
import { startHaproxy, startRedis } from "../test-support/services.ts";
import { startMockProcess } from "../test-support/spawn-mock.ts";

/**
 * For the benchmark: a redis-server and N mocks on it (behind HAProxy when N > 1), all children of this
 * process, so that the CPU the benchmark reads for this process's family is the whole deployment's.
 * Prints "listening on <url>" like the mock does.
 */
const { values } = parseArgs({
  options: {
    replicas: { type: "string", default: "1" },
    fixtures: { type: "string", default: BUNDLED_FIXTURES },
  },
});
const count = Number(values.replicas);
const redis = await startRedis();
const mocks = await Promise.all(
  Array.from({ length: count }, () =>
    startMockProcess(["--quiet", "--fixtures", values.fixtures, "--store", redis.url]),
  ),
);
const balancer =
  count > 1 ? await startHaproxy(mocks.map((mock) => Number(new URL(mock.url).port))) : undefined;
const url = balancer ? `http://127.0.0.1:${balancer.port}/v1` : (mocks[0]?.url as string);
process.stdout.write(`Redis-backed mocks listening on ${url}\n`);

const stop = async () => {
  await balancer?.stop();
  await Promise.all(mocks.map((mock) => mock.stop()));
  await redis.stop();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
