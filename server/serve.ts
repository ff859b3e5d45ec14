import { relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { allowedHosts, isLoopback } from "../common/allowed-hosts.ts";
import { StopSignals } from "../common/stop-signals.ts";
import { serveUntilDone } from "../common/wrapped-command.ts";
import { builtInContract, builtInControlContract } from "../contract/built-in.ts";
import type { Contract } from "../contract/contract.ts";
import { BASE_PATH, createServer } from "./app.ts";
import { compileCache } from "./compile-cache-hook.ts";
import { controlAccess } from "./control-access.ts";
import { CONTROL_PATH } from "./core/control.ts";
import { createMockCore, type MockCore, type MockCoreOptions } from "./core/mock.ts";
import { loadDashboardAssets } from "./dashboard-assets.ts";
import { FixtureError, type LoadedFixture, loadFixtureFile } from "./fixtures.ts";
import { generatedWorld, writeGeneratedFixtures } from "./generated-world.ts";
import { BUNDLED_FIXTURES, type CliOptions } from "./options.ts";
import { jsonLog, type MockLog, prettyLog } from "./request-log.ts";
import { openState } from "./state/open-state.ts";
import { fileVersion, WATCH_SETTLE_MS, watchFile } from "./watch.ts";

/**
 * Runs the mock as `petstore-mock` does, until a stop signal, or until the COMMAND it wraps ends; resolves to
 * the exit code: COMMAND's, else 0 once stopped cleanly (state written).
 */
export async function serve(options: CliOptions): Promise<number> {
  // Wrapping COMMAND, whose standard output is its own, the mock's lines go to stderr.
  const out = options.command ? process.stderr : process.stdout;
  if (options.generate && options.writeFixtures !== undefined)
    return writeFixtures(options, options.generate);
  const contract = builtInContract();
  const load = () => loadWorld(options, contract);
  const loaded = await load();
  if (typeof loaded === "string") {
    process.stderr.write(`error: ${loaded}\n`);
    return 1;
  }
  const { seed } = loaded;

  const log = options.quiet ? undefined : await chooseLog(options, out);
  const access = controlAccess(options.host, options.control, options.controlToken);
  const kept = await openState(options, seed);
  if (typeof kept === "string") {
    process.stderr.write(`error: ${kept}\n`);
    return 1;
  }
  const core = mockCore(options, contract, loaded, kept.state, access);
  const app = createServer({
    core,
    ...(log ? { log } : {}),
    ...(options.maxConnections !== undefined ? { maxConnections: options.maxConnections } : {}),
  });
  // A warming run talks only to itself: on a port of its own, whatever else is running.
  const port = await listen(app, options.warmCache ? { ...options, port: 0 } : options);
  if (typeof port !== "number") {
    await kept.state.close();
    return port.exitCode;
  }
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const origin = `http://${host}:${port}`;
  if (options.warmCache) {
    await askItself(`${origin}${BASE_PATH}`, loaded.apiKeys[0]);
    await app.close();
    await kept.close();
    return reportWarmCache(out);
  }
  // Watching starts before the ready line, so an edit made as soon as it appears is seen.
  const stopWatching = options.watch ? watchFixtures(options, load, core) : () => {};
  const signals = new StopSignals("petstore-mock");
  out.write(`${startLines(options, origin, loaded, access, kept.line).join("\n")}\n`);
  // Only a mock that serves writes the compile cache, so that it holds what serving compiles.
  compileCache()?.serving();

  const { code: commandCode } = await serveUntilDone(options.command, signals, {
    env: process.env,
    variable: "PETSTORE_MOCK_URL",
    url: `${origin}${BASE_PATH}`,
  });
  stopWatching();
  const closed = await app
    .close()
    .then(() => kept.close())
    .then(
      () => true,
      () => false,
    );
  return commandCode !== 0 ? commandCode : closed ? 0 : 1;
}

/**
 * --warm-cache: what a start and its first requests compile (a list, and a request refused), so that the
 * cache written next holds it.
 */
async function askItself(base: string, apiKey: string | undefined): Promise<void> {
  const headers: Record<string, string> = apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
  await (await fetch(`${base}/store/orders`, { headers })).arrayBuffer();
  await (await fetch(`${base}/store/orders/0`, { method: "DELETE" })).arrayBuffer();
}

function reportWarmCache(out: NodeJS.WritableStream): number {
  const cache = compileCache();
  if (!cache) {
    process.stderr.write(
      "warn: no compile cache to write: only the built petstore-mock command keeps one, and not with NODE_DISABLE_COMPILE_CACHE\n",
    );
    return 0;
  }
  if (!cache.write()) {
    process.stderr.write(`warn: the compile cache could not be written to ${cache.file}\n`);
    return 0;
  }
  out.write(`compile cache written to ${cache.file}\n`);
  return 0;
}

function mockCore(
  options: CliOptions,
  contract: Contract,
  loaded: LoadedFixture,
  state: MockCoreOptions["state"],
  access: ReturnType<typeof controlAccess>,
): MockCore {
  return createMockCore({
    seed: loaded.seed,
    state,
    apiKeys: loaded.apiKeys,
    contract,
    ...(access.enabled
      ? {
          control: {
            contract: builtInControlContract(),
            assets: loadDashboardAssets(),
            hosts: allowedHosts(options.host, options.allowedHosts),
            ...(access.token ? { token: access.token } : {}),
          },
        }
      : {}),
    corsOrigins: options.corsOrigins,
  });
}

/**
 * The port listened on, or the exit code after one line saying why it could not: a port in use is the
 * command line's to fix (2, as the proxy says it), anything else the machine's (1).
 */
async function listen(
  app: ReturnType<typeof createServer>,
  options: CliOptions,
): Promise<number | { exitCode: number }> {
  try {
    return (await app.listen(options.port, options.host)).port;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === "EADDRINUSE") {
      process.stderr.write(
        `error: port ${options.port} on ${options.host} is in use: pick another with --port (0 for any free one)\n`,
      );
      return { exitCode: 2 };
    }
    process.stderr.write(`error: cannot listen on ${options.host}:${options.port}: ${code ?? message}\n`);
    return { exitCode: 1 };
  }
}

/** `--generate N --write-fixtures FILE`: the world written as a fixture file, and nothing served. */
function writeFixtures(options: CliOptions, { orders, seed }: NonNullable<CliOptions["generate"]>): number {
  try {
    const { tightenedFrom } = writeGeneratedFixtures(
      options.writeFixtures as string,
      orders,
      seed,
      options.apiKeys,
    );
    if (tightenedFrom !== undefined) {
      process.stderr.write(
        `note: ${options.writeFixtures} was readable by its group or others (${octal(tightenedFrom)}) and now holds a key given with --api-key: it is now 0600\n`,
      );
    }
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    process.stderr.write(`error: cannot write ${options.writeFixtures}: ${code ?? message}\n`);
    return 1;
  }
  process.stdout.write(
    `wrote a generated world of ${orders} orders (--seed ${seed}) to ${options.writeFixtures}\n`,
  );
  return 0;
}

/** The fixture, its seed and the keys it yields, or the one-line problem that makes it unusable. */
async function loadWorld(options: CliOptions, contract: Contract): Promise<LoadedFixture | string> {
  let loaded: LoadedFixture;
  try {
    loaded = options.generate
      ? generatedWorld(options.generate.orders, options.generate.seed)
      : await loadFixtureFile(options.fixtures, contract);
  } catch (error) {
    if (!(error instanceof FixtureError)) throw error;
    return error.message;
  }
  const apiKeys = options.apiKeys ?? loaded.apiKeys;
  if (apiKeys.length === 0) {
    return `${options.fixtures}: field "apiKeys": no API key; add one to the file or pass --api-key`;
  }
  return { ...loaded, apiKeys };
}

/**
 * `--watch`: a reload reads the file while the old world keeps answering; changes during one are read after
 * it. Returns what stops watching.
 */
function watchFixtures(
  options: CliOptions,
  load: () => Promise<LoadedFixture | string>,
  core: MockCore,
): () => void {
  const fixtureName = relative(process.cwd(), options.fixtures);
  let reloading: Promise<void> = Promise.resolve();
  const reload = async () => {
    const read = await fileVersion(options.fixtures);
    const next = await load();
    if (typeof next === "string") {
      // A save caught halfway (truncated, then written) is no error of the user's: said once it stays so.
      await sleep(WATCH_SETTLE_MS);
      if ((await fileVersion(options.fixtures)) === read)
        process.stderr.write(`error: ${next}\n  the previous fixtures stay in use\n`);
      return;
    }
    core.reload(next.seed, next.apiKeys);
    process.stdout.write(`fixtures reloaded: ${fixtureName} (${next.seed.size} orders)\n`);
  };
  return watchFile(options.fixtures, () => {
    reloading = reloading.then(reload);
  });
}

/** The start-up lines: where it listens, the world, the control API, the state, and the dev key if public. */
function startLines(
  options: CliOptions,
  origin: string,
  loaded: LoadedFixture,
  access: ReturnType<typeof controlAccess>,
  stateLine: string,
): string[] {
  const { seed } = loaded;
  const fixtureName = relative(process.cwd(), options.fixtures);
  const lines = [`Petstore Store Orders mock listening on ${origin}${BASE_PATH}`];
  lines.push(
    options.generate
      ? `  fixtures: none, a generated world (${seed.size} orders, --seed ${options.generate.seed})`
      : `  fixtures: ${fixtureName} (${seed.size} orders)${options.watch ? ", watched" : ""}`,
  );
  lines.push(
    access.enabled
      ? `  control API: ${origin}${CONTROL_PATH}${access.token ? " (needs the control token)" : ""}\n` +
          `  dashboard: ${origin}${CONTROL_PATH}/`
      : `  control API: ${access.reason}`,
  );
  lines.push(`  state: ${stateLine}`);
  if (!isLoopback(options.host)) {
    lines.push(`  bound to ${options.host}: reachable from other machines, not only this one`);
  }
  // Only the bundled file's key is documented and public; any other key is a secret and never printed.
  if (!options.apiKeys && (options.generate || resolve(options.fixtures) === BUNDLED_FIXTURES)) {
    lines.push(
      `  dev API key (${options.generate ? "generated world" : "bundled fixtures"}): ${loaded.apiKeys[0]}`,
    );
  }
  return lines;
}

function chooseLog(options: CliOptions, out: NodeJS.WriteStream): MockLog | Promise<MockLog> {
  const format = options.logFormat ?? (out.isTTY ? "pretty" : "json");
  if (format === "json") return jsonLog(options.logLevel, out === process.stderr ? 2 : 1);
  return prettyLog({
    level: options.logLevel,
    color: out.isTTY === true && !process.env.NO_COLOR,
    write: (text) => out.write(text),
  });
}

const octal = (mode: number) => `0${mode.toString(8).padStart(3, "0")}`;
