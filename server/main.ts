#!/usr/bin/env -S npx tsx
import { relative, resolve } from "node:path";
import { pino } from "pino";
import { readCommandLine } from "../common/command-line.ts";
import { loadContract, loadControlContract } from "../contract/openapi.ts";
import { BASE_PATH, createServer } from "./app.ts";
import { controlAccess, isLoopback } from "./control-access.ts";
import { CONTROL_PATH } from "./core/control.ts";
import { createMockCore } from "./core/mock.ts";
import { createSeed } from "./core/seed.ts";
import { loadDashboardAssets } from "./dashboard-assets.ts";
import { type Fixture, FixtureError, loadFixtureFile } from "./fixtures.ts";
import { BUNDLED_FIXTURES, parseCliOptions, USAGE } from "./options.ts";
import { watchFile } from "./watch.ts";

async function main(): Promise<number> {
  const options = readCommandLine(() => parseCliOptions(process.argv.slice(2), process.env), USAGE);
  if (typeof options === "number") return options;

  const contract = loadContract();
  /** The fixture and the keys it yields, or the one-line problem that makes it unusable. */
  const load = (): { fixture: Fixture; apiKeys: string[] } | string => {
    let fixture: Fixture;
    try {
      fixture = loadFixtureFile(options.fixtures, contract);
    } catch (error) {
      if (!(error instanceof FixtureError)) throw error;
      return error.message;
    }
    const apiKeys = options.apiKeys ?? fixture.apiKeys;
    if (apiKeys.length === 0) {
      return `${options.fixtures}: field "apiKeys": no API key; add one to the file or pass --api-key`;
    }
    return { fixture, apiKeys };
  };
  const loaded = load();
  if (typeof loaded === "string") {
    process.stderr.write(`error: ${loaded}\n`);
    return 1;
  }
  const { fixture } = loaded;

  // Redaction guards against a future log call that passes request headers; today none does.
  const logger = options.quiet
    ? undefined
    : pino({
        level: options.logLevel,
        redact: { paths: ["req.headers.authorization", "headers.authorization"], remove: true },
      });
  const access = controlAccess(options.host, options.control, options.controlToken);
  const core = createMockCore({
    seed: createSeed(fixture.orders),
    apiKeys: loaded.apiKeys,
    contract,
    ...(access.enabled
      ? {
          control: {
            contract: loadControlContract(),
            assets: loadDashboardAssets(),
            ...(access.token ? { token: access.token } : {}),
          },
        }
      : {}),
    corsOrigins: options.corsOrigins,
    maxSessions: options.maxSessions,
    sessionIdleMs: options.sessionIdleMs,
    journalSize: options.journalSize,
  });
  const app = createServer({ core, ...(logger ? { logger } : {}) });

  let port: number;
  try {
    ({ port } = await app.listen(options.port, options.host));
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    process.stderr.write(`error: cannot listen on ${options.host}:${options.port}: ${code ?? message}\n`);
    return 1;
  }
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const origin = `http://${host}:${port}`;
  // The one start-up event in the structured log too, for those who read only the JSON lines.
  logger?.info(`Server listening at ${origin}`);
  const fixtureName = relative(process.cwd(), options.fixtures);
  const lines = [`Petstore Store Orders mock listening on ${origin}${BASE_PATH}`];
  lines.push(
    `  fixtures: ${fixtureName} (${fixture.orders.length} orders)${options.watch ? ", watched" : ""}`,
  );
  lines.push(
    access.enabled
      ? `  control API: ${origin}${CONTROL_PATH}${access.token ? " (needs the control token)" : ""}\n` +
          `  dashboard: ${origin}${CONTROL_PATH}/`
      : `  control API: ${access.reason}`,
  );
  if (!isLoopback(options.host)) {
    lines.push(`  bound to ${options.host}: reachable from other machines, not only this one`);
  }
  // Only the bundled file's key is documented and public; any other key is a secret and never printed.
  if (!options.apiKeys && resolve(options.fixtures) === BUNDLED_FIXTURES) {
    lines.push(`  dev API key (bundled fixtures): ${fixture.apiKeys[0]}`);
  }
  // Watching starts before the ready line, so an edit made as soon as it appears is seen.
  const stopWatching = options.watch
    ? watchFile(options.fixtures, () => {
        const next = load();
        if (typeof next === "string") {
          process.stderr.write(`error: ${next}\n  the previous fixtures stay in use\n`);
          return;
        }
        core.reload(createSeed(next.fixture.orders), next.apiKeys);
        process.stdout.write(`fixtures reloaded: ${fixtureName} (${next.fixture.orders.length} orders)\n`);
      })
    : () => {};

  process.stdout.write(`${lines.join("\n")}\n`);

  return new Promise((done) => {
    let closing = false;
    const shutDown = () => {
      if (closing) return done(1);
      closing = true;
      stopWatching();
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
