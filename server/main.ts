#!/usr/bin/env -S npx tsx
import { relative, resolve } from "node:path";
import { pino } from "pino";
import { readCommandLine } from "../common/command-line.ts";
import { loadContract } from "../contract/openapi.ts";
import { BASE_PATH, createServer } from "./app.ts";
import { FixtureError, loadFixtureFile } from "./fixtures.ts";
import { BUNDLED_FIXTURES, parseCliOptions, USAGE } from "./options.ts";
import { createStore } from "./store.ts";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1"]);

async function main(): Promise<number> {
  const options = readCommandLine(() => parseCliOptions(process.argv.slice(2), process.env), USAGE);
  if (typeof options === "number") return options;

  const contract = loadContract();
  let fixture: ReturnType<typeof loadFixtureFile>;
  try {
    fixture = loadFixtureFile(options.fixtures, contract);
  } catch (error) {
    if (!(error instanceof FixtureError)) throw error;
    process.stderr.write(`error: ${error.message}\n`);
    return 1;
  }
  const apiKeys = options.apiKeys ?? fixture.apiKeys;
  if (apiKeys.length === 0) {
    process.stderr.write(
      `error: ${options.fixtures}: field "apiKeys": no API key; add one to the file or pass --api-key\n`,
    );
    return 1;
  }

  // Redaction guards against a future log call that passes request headers; today none does.
  const logger = options.quiet
    ? undefined
    : pino({
        level: options.logLevel,
        redact: { paths: ["req.headers.authorization", "headers.authorization"], remove: true },
      });
  const app = await createServer({
    store: createStore(fixture.orders),
    apiKeys,
    corsOrigins: options.corsOrigins,
    ...(logger ? { logger } : {}),
  });

  try {
    await app.listen({ port: options.port, host: options.host });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    process.stderr.write(`error: cannot listen on ${options.host}:${options.port}: ${code ?? message}\n`);
    return 1;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const lines = [`Petstore Store Orders mock listening on http://${host}:${port}${BASE_PATH}`];
  lines.push(`  fixtures: ${relative(process.cwd(), options.fixtures)} (${fixture.orders.length} orders)`);
  if (!LOOPBACK_HOSTS.has(options.host)) {
    lines.push(`  bound to ${options.host}: reachable from other machines, not only this one`);
  }
  // Only the bundled file's key is documented and public; any other key is a secret and never printed.
  if (!options.apiKeys && resolve(options.fixtures) === BUNDLED_FIXTURES) {
    lines.push(`  dev API key (bundled fixtures): ${fixture.apiKeys[0]}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);

  return new Promise((done) => {
    let closing = false;
    const shutDown = () => {
      if (closing) return done(1);
      closing = true;
      app.close().then(
        () => done(0),
        () => done(1),
      );
    };
    process.on("SIGINT", shutDown);
    process.on("SIGTERM", shutDown);
  });
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`error: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  },
);
