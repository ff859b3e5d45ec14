import type { ParseArgsConfig } from "node:util";
import { isToken68, TOKEN68_RULE } from "../common/bearer.ts";
import { type FlagValuesOf, parseFlags, splitAtCommand, UsageError } from "../common/command-line.ts";
import { parseByteSize, parseDuration, parsePort, parseWholeNumber } from "../common/option-values.ts";
import { packageFile } from "../common/package-root.ts";
import { DEFAULT_GENERATE_SEED, MAX_GENERATED_ORDERS } from "./core/generate.ts";
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "./request-log.ts";
import { parseStoreUrl, type StoreAddress } from "./state/store-url.ts";

/** Keys in a shared Redis start with this unless --store-prefix says otherwise. */
export const DEFAULT_STORE_PREFIX = "petstore-mock:";

export const BUNDLED_FIXTURES = packageFile("fixtures/orders.json");

export interface CliOptions {
  port: number;
  host: string;
  fixtures: string;
  /** Serve a generated world of this many orders instead of a fixture file. */
  generate?: { orders: number; seed: number };
  /** With `generate`: write the world to this fixture file and exit. */
  writeFixtures?: string;
  /** Start, answer a list to itself, write the built command's compile cache and exit (--warm-cache). */
  warmCache?: boolean;
  /** Keys given on the command line or in the environment; they replace the fixture file's keys. */
  apiKeys?: string[];
  corsOrigins: string[] | "*";
  quiet: boolean;
  logLevel: LogLevel;
  /** Unset: pretty on a terminal, JSON lines otherwise. */
  logFormat?: LogFormat;
  /** False with --no-control; a non-loopback bind without a token also keeps it off (see controlState). */
  control: boolean;
  controlToken?: string;
  /** Host names the control API answers beyond loopback names and the bound address. */
  allowedHosts: string[];
  maxSessions: number;
  /** What sessions in memory may hold together beyond the shared seed, and one world's orders at most (--max-memory). */
  maxMemoryBytes: number;
  /** Connections kept open at once; unset: defaultMaxConnections(). */
  maxConnections?: number;
  sessionIdleMs: number;
  journalSize: number;
  watch: boolean;
  /** A JSON file the state is kept in across restarts. */
  stateFile?: string;
  stateJournal: boolean;
  /** A redis:// URL: the state lives there, shared by every mock on it. */
  store?: StoreAddress;
  storePrefix: string;
  /** COMMAND and its arguments, given after `--`: the mock serves while it runs, then stops. */
  command?: string[];
  help: boolean;
}

export const USAGE = `Usage: petstore-mock [options] [-- COMMAND [ARGS...]]

Runs the stateful Petstore Store Orders mock at http://HOST:PORT/v1 until stopped (Ctrl-C, SIGTERM).
With -- COMMAND: serves until COMMAND ends, then stops and exits with COMMAND's exit code. COMMAND runs
once the mock serves, with PETSTORE_MOCK_URL set to its base address (ending in /v1); stop signals go on
to COMMAND, and the mock's own lines go to stderr.

Options (each flag overrides its environment variable):
  --port PORT            port to listen on; 0 picks a free one          (PORT, default 4010)
  --host HOST            address to bind; anything but loopback is
                         reachable from other machines                   (HOST, default 127.0.0.1)
  --fixtures FILE        fixture file seeding the orders and API keys;   (PETSTORE_FIXTURES,
                         a project's ./fixtures/orders.json is read       default: the package's own
                         only when named here                             bundled fixtures/orders.json)
  --api-key KEY          accepted API key, repeatable; replaces the
                         fixture file's keys                             (PETSTORE_API_KEYS, comma-separated)
  --cors-origin ORIGIN   origin allowed from browsers, repeatable        (PETSTORE_CORS_ORIGINS,
                                                                          comma-separated, default any)
  --quiet                no request log; the start-up lines and errors   (PETSTORE_QUIET=1)
                         still go out
  --log-level LEVEL      fatal, error, warn, info, debug or trace        (PETSTORE_LOG_LEVEL, default info)
  --log-format FORMAT    pretty (a short line per request) or json
                         (pino's JSON lines)                             (PETSTORE_LOG_FORMAT, default pretty
                                                                          on a terminal, json otherwise)
  --watch                reload the fixture file when it changes         (PETSTORE_WATCH=1)
  --max-connections N    connections kept open; past it a new one closes
                         the oldest with no answer in progress           (default 4/5 of the fd limit)
  --generate N           serve a generated world of N orders instead of a fixture file: valid orders,
                         unique ids, pending and shipped, the same bytes for the same --seed; the key is
                         dev-key-123 unless --api-key is given
  --seed S               the generator's seed, a whole number from 0 to 2^32-1               (default 1)
  --write-fixtures FILE  with --generate: write that world to FILE as a fixture file and exit
  --warm-cache           start, answer a list and a refused request to itself, write the compile cache
                         and exit: run it where an image or a CI cache is made, so that the first start
                         there is as quick as any

Control API at http://HOST:PORT/__control (sessions, forced responses, journal):
  --no-control           turn it off: /__control is a plain 404 and
                         X-Mock-Session and Prefer are ignored           (PETSTORE_NO_CONTROL=1)
  --control-token TOKEN  require Authorization: Bearer TOKEN on it;
                         needed to have it at all beyond loopback        (PETSTORE_CONTROL_TOKEN)
  --allowed-host NAME    a Host name it answers besides loopback names
                         and the bound address (repeatable); pages of
                         other origins need --cors-origin
  --max-sessions N       live sessions; the least recently used goes     (default 1000)
  --max-memory SIZE      what sessions may hold together beyond the
                         shared fixtures (changed orders, own lists,
                         journals); past it the least recently used go;
                         one world's orders at most: more is 409         (default 256MiB)
  --session-idle TIME    a session unused this long goes (500ms, 90s,
                         30m, 2h)                                        (default 30m)
  --journal-size N       requests kept in each world's journal           (default 1000)

State beyond one process (by default it lives in memory and goes at exit):
  --state FILE           keep orders, rules and sessions in FILE, written
                         as changes settle and at exit, read at start    (PETSTORE_STATE)
  --state-journal        keep the journals in that file too              (PETSTORE_STATE_JOURNAL=1)
  --store URL            keep all state in Redis, shared by every mock
                         on it: redis://[user:password@]host:port[/db]   (PETSTORE_STORE)
  --store-prefix PREFIX  prefix of the mock's Redis keys, so several
                         mocks can share one Redis                       (PETSTORE_STORE_PREFIX,
                                                                          default petstore-mock:)

  --help                 show this help
  --version              print the package's version

Exit codes: 0 after a clean stop (SIGINT, SIGTERM, SIGHUP; or --write-fixtures, --warm-cache done); 1 an
unusable fixture or state file (unreadable, or not writable where it is named), a state not written at
stop, Redis unreachable, an address that cannot be bound, or a stop not done within 10 s; 2 a bad option or a port in use; each with one line that says what. With -- COMMAND,
COMMAND's exit code; COMMAND finds petstore-mock and petstore-conformance first on its PATH.
`;

export const FLAGS = {
  port: { type: "string" },
  host: { type: "string" },
  fixtures: { type: "string" },
  "api-key": { type: "string", multiple: true },
  "cors-origin": { type: "string", multiple: true },
  quiet: { type: "boolean" },
  "log-level": { type: "string" },
  "log-format": { type: "string" },
  watch: { type: "boolean" },
  "no-control": { type: "boolean" },
  "control-token": { type: "string" },
  "allowed-host": { type: "string", multiple: true },
  "max-sessions": { type: "string" },
  "max-connections": { type: "string" },
  "max-memory": { type: "string" },
  "session-idle": { type: "string" },
  "journal-size": { type: "string" },
  generate: { type: "string" },
  seed: { type: "string" },
  "write-fixtures": { type: "string" },
  "warm-cache": { type: "boolean" },
  state: { type: "string" },
  "state-journal": { type: "boolean" },
  store: { type: "string" },
  "store-prefix": { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

type FlagValues = FlagValuesOf<typeof FLAGS>;

export function parseCliOptions(argv: readonly string[], environment: NodeJS.ProcessEnv): CliOptions {
  const env = withoutEmptyValues(environment);
  const { options: flags, command } = splitAtCommand(argv);
  const values = parseFlags(flags, FLAGS);
  const apiKeys = values["api-key"] ?? splitList(env.PETSTORE_API_KEYS);
  if (apiKeys?.some((key) => !isToken68(key))) {
    throw new UsageError(`API keys must be ${TOKEN68_RULE}`);
  }
  const corsOrigins = values["cors-origin"] ?? splitList(env.PETSTORE_CORS_ORIGINS);
  const controlToken = values["control-token"] ?? env.PETSTORE_CONTROL_TOKEN;
  const logFormat = values["log-format"] ?? env.PETSTORE_LOG_FORMAT;
  if (controlToken !== undefined && (controlToken.length < 8 || !isToken68(controlToken))) {
    throw new UsageError(`--control-token must be at least 8 characters: ${TOKEN68_RULE}`);
  }
  return {
    port: parsePort("--port", values.port ?? env.PORT ?? "4010"),
    host: values.host ?? env.HOST ?? "127.0.0.1",
    ...worldOptions(values, env, command),
    ...(apiKeys && apiKeys.length > 0 ? { apiKeys } : {}),
    corsOrigins: !corsOrigins || corsOrigins.includes("*") ? "*" : corsOrigins,
    quiet: values.quiet ?? isOn(env.PETSTORE_QUIET),
    logLevel: parseLogLevel(values["log-level"] ?? env.PETSTORE_LOG_LEVEL ?? "info"),
    ...(logFormat !== undefined ? { logFormat: parseLogFormat(logFormat) } : {}),
    control: !(values["no-control"] ?? isOn(env.PETSTORE_NO_CONTROL)),
    ...(controlToken !== undefined ? { controlToken } : {}),
    allowedHosts: values["allowed-host"] ?? [],
    ...limitOptions(values),
    ...stateOptions(values, env),
    ...(command ? { command } : {}),
    ...(values["warm-cache"] ? { warmCache: true } : {}),
    help: values.help ?? false,
  };
}

/** Where the world comes from: a fixture file (watched or not), or a generated one (maybe written out). */
function worldOptions(
  values: FlagValues,
  env: NodeJS.ProcessEnv,
  command: string[] | undefined,
): Pick<CliOptions, "fixtures" | "generate" | "writeFixtures" | "watch"> {
  const generate = parseGenerate(values);
  const watch = values.watch ?? isOn(env.PETSTORE_WATCH);
  if (generate && values.fixtures !== undefined)
    throw new UsageError("--generate and --fixtures cannot be used together: the world is one or the other");
  if (generate && watch) throw new UsageError("--watch reloads a fixture file; a generated world has none");
  if (values["write-fixtures"] !== undefined && !generate)
    throw new UsageError("--write-fixtures needs --generate N");
  if (command && values["warm-cache"])
    throw new UsageError("--warm-cache starts and stops the mock itself: it wraps no COMMAND");
  if (command && values["write-fixtures"] !== undefined)
    throw new UsageError("--write-fixtures writes a file and exits; it runs no COMMAND");
  return {
    fixtures: values.fixtures ?? env.PETSTORE_FIXTURES ?? BUNDLED_FIXTURES,
    ...(generate ? { generate } : {}),
    ...(values["write-fixtures"] !== undefined ? { writeFixtures: values["write-fixtures"] } : {}),
    watch,
  };
}

/** What callers can make the mock hold: sessions, connections, memory, idle time, journal entries. */
function limitOptions(
  values: FlagValues,
): Pick<CliOptions, "maxSessions" | "maxMemoryBytes" | "maxConnections" | "sessionIdleMs" | "journalSize"> {
  const count = (flag: string, text: string, minimum: number) =>
    parseWholeNumber(flag, text, { minimum, maximum: MAX_COUNT });
  return {
    maxSessions: count("--max-sessions", values["max-sessions"] ?? "1000", 1),
    maxMemoryBytes: parseByteSize("--max-memory", values["max-memory"] ?? "256MiB"),
    ...(values["max-connections"] !== undefined
      ? { maxConnections: count("--max-connections", values["max-connections"], 1) }
      : {}),
    sessionIdleMs: parseDuration("--session-idle", values["session-idle"] ?? "30m", {
      maxMs: MAX_SESSION_IDLE_MS,
    }),
    journalSize: count("--journal-size", values["journal-size"] ?? "1000", 0),
  };
}

/** Where state lives beyond the process: a file, or Redis; never both. */
function stateOptions(
  values: FlagValues,
  env: NodeJS.ProcessEnv,
): Pick<CliOptions, "stateFile" | "stateJournal" | "store" | "storePrefix"> {
  const stateFile = values.state ?? env.PETSTORE_STATE;
  const stateJournal = values["state-journal"] ?? isOn(env.PETSTORE_STATE_JOURNAL);
  const storeUrl = values.store ?? env.PETSTORE_STORE;
  const storePrefix = values["store-prefix"] ?? env.PETSTORE_STORE_PREFIX;
  if (stateFile !== undefined && storeUrl !== undefined) {
    throw new UsageError("--state and --store cannot be used together: Redis already keeps the state");
  }
  if (stateJournal && stateFile === undefined) throw new UsageError("--state-journal needs --state FILE");
  if (storePrefix !== undefined && storeUrl === undefined)
    throw new UsageError("--store-prefix needs --store URL");
  if (storePrefix !== undefined && !/^[\x21-\x7e]{1,64}$/.test(storePrefix)) {
    throw new UsageError("--store-prefix must be 1 to 64 printable characters without spaces");
  }
  const store = storeUrl === undefined ? undefined : parseStoreUrl(storeUrl);
  if (typeof store === "string") throw new UsageError(store);
  return {
    ...(stateFile !== undefined ? { stateFile } : {}),
    stateJournal,
    ...(store ? { store } : {}),
    storePrefix: storePrefix ?? DEFAULT_STORE_PREFIX,
  };
}

function parseGenerate(values: { generate?: string; seed?: string }): CliOptions["generate"] {
  if (values.generate === undefined) {
    if (values.seed !== undefined) throw new UsageError("--seed needs --generate N");
    return undefined;
  }
  const orders = Number(values.generate);
  if (!/^\d+$/.test(values.generate) || orders > MAX_GENERATED_ORDERS)
    throw new UsageError(
      `--generate must be a whole number of orders from 0 to ${MAX_GENERATED_ORDERS} (got "${values.generate}")`,
    );
  const seedText = values.seed ?? String(DEFAULT_GENERATE_SEED);
  if (!/^\d{1,10}$/.test(seedText) || Number(seedText) > 0xffffffff)
    throw new UsageError(`--seed must be a whole number from 0 to 4294967295 (got "${seedText}")`);
  return { orders, seed: Number(seedText) };
}

function parseLogLevel(text: string): LogLevel {
  if (!LOG_LEVELS.includes(text as LogLevel))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")} (got "${text}")`);
  return text as LogLevel;
}

function parseLogFormat(text: string): LogFormat {
  if (!LOG_FORMATS.includes(text as LogFormat))
    throw new UsageError(`--log-format must be one of ${LOG_FORMATS.join(", ")} (got "${text}")`);
  return text as LogFormat;
}

const isOn = (value: string | undefined) => ["1", "true"].includes(value ?? "");

const MAX_COUNT = 1_000_000;
/** A session can be kept idle for a week at most. */
const MAX_SESSION_IDLE_MS = 7 * 24 * 3_600_000;

// An exported but empty variable (PORT=) means "not set", as shells and CI templates often leave them.
function withoutEmptyValues(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
}

function splitList(text: string | undefined): string[] | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  return text.split(",").map((item) => item.trim());
}
