import { fileURLToPath } from "node:url";
import type { ParseArgsConfig } from "node:util";
import { parseFlags, UsageError } from "../common/command-line.ts";

export const BUNDLED_FIXTURES = fileURLToPath(new URL("../fixtures/orders.json", import.meta.url));

export interface CliOptions {
  port: number;
  host: string;
  fixtures: string;
  /** Keys given on the command line or in the environment; they replace the fixture file's keys. */
  apiKeys?: string[];
  corsOrigins: string[] | "*";
  quiet: boolean;
  logLevel: LogLevel;
  help: boolean;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const USAGE = `Usage: npm start -- [options]
       tsx server/main.ts [options]

Runs the stateful Petstore Store Orders mock at http://HOST:PORT/v1.

Options (each flag overrides its environment variable):
  --port PORT            port to listen on; 0 picks a free one          (PORT, default 4010)
  --host HOST            address to bind; anything but loopback is
                         reachable from other machines                   (HOST, default 127.0.0.1)
  --fixtures FILE        fixture file seeding the orders and API keys    (PETSTORE_FIXTURES,
                                                                          default fixtures/orders.json)
  --api-key KEY          accepted API key, repeatable; replaces the
                         fixture file's keys                             (PETSTORE_API_KEYS, comma-separated)
  --cors-origin ORIGIN   origin allowed from browsers, repeatable        (PETSTORE_CORS_ORIGINS,
                                                                          comma-separated, default any)
  --quiet                no log at all                                   (PETSTORE_QUIET=1)
  --log-level LEVEL      fatal, error, warn, info, debug or trace        (PETSTORE_LOG_LEVEL, default info)
  --help                 show this help
`;

const FLAGS = {
  port: { type: "string" },
  host: { type: "string" },
  fixtures: { type: "string" },
  "api-key": { type: "string", multiple: true },
  "cors-origin": { type: "string", multiple: true },
  quiet: { type: "boolean" },
  "log-level": { type: "string" },
  help: { type: "boolean", short: "h" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

export function parseCliOptions(argv: readonly string[], environment: NodeJS.ProcessEnv): CliOptions {
  const env = withoutEmptyValues(environment);
  const values = parseFlags(argv, FLAGS);
  const apiKeys = values["api-key"] ?? splitList(env.PETSTORE_API_KEYS);
  if (apiKeys?.some((key) => key.trim() === "" || /\s/.test(key))) {
    throw new UsageError("API keys must be non-empty and contain no white space");
  }
  const corsOrigins = values["cors-origin"] ?? splitList(env.PETSTORE_CORS_ORIGINS);
  return {
    port: parsePort(values.port ?? env.PORT ?? "4010"),
    host: values.host ?? env.HOST ?? "127.0.0.1",
    fixtures: values.fixtures ?? env.PETSTORE_FIXTURES ?? BUNDLED_FIXTURES,
    ...(apiKeys && apiKeys.length > 0 ? { apiKeys } : {}),
    corsOrigins: !corsOrigins || corsOrigins.includes("*") ? "*" : corsOrigins,
    quiet: values.quiet ?? ["1", "true"].includes(env.PETSTORE_QUIET ?? ""),
    logLevel: parseLogLevel(values["log-level"] ?? env.PETSTORE_LOG_LEVEL ?? "info"),
    help: values.help ?? false,
  };
}

function parseLogLevel(text: string): LogLevel {
  if (!LOG_LEVELS.includes(text as LogLevel))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")} (got "${text}")`);
  return text as LogLevel;
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new UsageError(`--port must be a whole number from 0 to 65535 (got "${text}")`);
  return port;
}

// An exported but empty variable (PORT=) means "not set", as shells and CI templates often leave them.
function withoutEmptyValues(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
}

function splitList(text: string | undefined): string[] | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  return text.split(",").map((item) => item.trim());
}
