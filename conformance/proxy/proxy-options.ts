import { type FlagValuesOf, parseFlags, splitAtCommand, UsageError } from "../../common/command-line.ts";
import { parseByteSize, parseDuration, parsePort, parseWholeNumber } from "../../common/option-values.ts";
import { PROXY_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import {
  parseReporters,
  ReportedUsageError,
  type ReporterTarget,
  refuseSharedFiles,
  reportersAskedFor,
} from "../reports/reporter-options.ts";
import { hideUrlCredentials } from "../target/credentials.ts";
import {
  REACH_FLAGS,
  REACH_SETTING_FLAGS,
  READER_LIMITS_HELP,
  readHeaders,
  readReaderLimits,
  readTls,
  required,
} from "../target/reach-options.ts";
import { DEFAULT_PROXY_PORT } from "./defaults.ts";
import type { ProxyOptions } from "./run-proxy.ts";

export interface ProxyCliOptions {
  proxy: ProxyOptions;
  reporters: ReporterTarget[];
  failOnViolation: boolean;
  /** How often the report files and the HAR are written while the proxy runs. */
  flushEveryMs: number;
  /** No line per exchange; the start, the stop and errors are still said. */
  quiet?: boolean;
  /** COMMAND and its arguments, given after `--`: the proxy judges while it runs, then reports. */
  command?: string[];
  help: boolean;
}

export const PROXY_USAGE = `Usage: petstore-conformance proxy --upstream URL [options] [-- COMMAND [ARGS...]]

A reverse proxy on this machine that forwards every request under its /v1 to the upstream unchanged and
judges each exchange with the suite's checks: the contract, and the spec's state rules across the traffic.
Point the app or its end-to-end tests at http://127.0.0.1:PORT/v1; stop with Ctrl-C or SIGTERM to get
the reports.

With -- COMMAND: runs COMMAND once the proxy listens, with PETSTORE_PROXY_URL set to its base address
(ending in /v1), and stops when COMMAND ends; stop signals go on to COMMAND, and the proxy's own lines go
to stderr. The exit code is COMMAND's when it failed, else as below.

  --upstream URL            the deployment's base address, ending in /v1   (PETSTORE_UPSTREAM)
  --port N                  where the proxy listens (default ${DEFAULT_PROXY_PORT}; 0 for any free port)
  --host ADDRESS            the address it listens on (default 127.0.0.1)
  --allowed-host NAME       a Host name it answers besides loopback names and its address (repeatable)
  --cors-origin ORIGIN      a page origin that may read answers the proxy's --header credentials unlocked
                            (repeatable); with such credentials, other origins get no CORS grant
  --strict                  accept only statuses openapi.yaml documents, even for input it has no case for
  --errors                  answer an exchange that breaks a rule with 502 and an Error record naming it
                            (off by default: the proxy changes nothing)
  --max-connections N       client connections open at once (default 2/5 of the file descriptors left,
                            each may hold an upstream one too); past it a new one closes the oldest idle
                            one, or is closed when all are busy
  --request-timeout TIME    how long a client may take to send a whole request, head and body (default
                            30s): past it, 408 and the connection closed
  --not-orders PATH         a path prefix of another API whose writes never touch orders (repeatable):
                            they do not start the state rules again; one covering the contract's paths
                            is refused

Reaching the upstream (as the suite reaches a target):
  --ca-file PEM, --cert PEM --key PEM, --insecure, --proxy URL (or http_proxy, https_proxy/HTTPS_PROXY,
  all_proxy, no_proxy/NO_PROXY as curl reads them), --header 'Name: value' (masked unless --show-header
  NAME), --header-from-env Name=VARIABLE (the value read from the environment, kept out of the command
  line), --timeout TIME (until the answer starts, default 10s), --deadline TIME (the whole exchange, default
  2m; every duration takes its unit: 500ms, 90s, 2m)
  --max-memory SIZE         what the traffic may make the proxy hold at once: answers and lists in
                            flight, the ids of lists being judged, the lists the state rules keep
                            (default 256MiB); past it kept lists go first, then each exchange holds less
  --max-body SIZE           judge at most this much of one body (default 2GiB; bytes, or kB, MB, GB, KiB,
                            MiB, GiB): a larger one passes through unchanged and is counted as not judged
${READER_LIMITS_HELP}

Reports:
  one line per exchange as it happens: readable on a terminal, JSON lines otherwise
  --quiet                   no line per exchange (a CI log of COMMAND's own); the reports are unchanged
  --reporter NAME[:FILE]    on exit: pretty (default), json, junit, html or markdown, to FILE or standard
                            output; repeatable
  --secret NAME             a header or query parameter whose value is a credential, masked everywhere
                            like Authorization, Cookie, X-Api-Key or access_token are; repeatable
  --har FILE                write every exchange to FILE as HAR 1.2 as it happens, credentials hidden
  --flush-every TIME        while it runs, write the report files and the HAR under their names this
                            often (default 60s), so that a kill loses at most that much
  --fail-on-violation       exit 1 when any check failed, or when no exchange was judged at all;
                            2 when nothing failed but an exchange was not judged whole (a limit, an
                            answer cut short, an upstream that did not answer)
  --help                    show this help
  --version                 print the package's version

Exit codes: 0 stopped (and, with --fail-on-violation, something was judged and nothing failed), 1 a check
failed or nothing was judged, with --fail-on-violation, 2 bad usage, an upstream it cannot reach at start,
an exchange judged only in part or not at all for a limit (with --fail-on-violation),
a report or HAR it could not write, or a fault of the proxy's own (said on stderr and in the report).
`;

export const FLAGS = {
  upstream: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  "allowed-host": { type: "string", multiple: true },
  "cors-origin": { type: "string", multiple: true },
  "max-memory": { type: "string" },
  strict: { type: "boolean" },
  errors: { type: "boolean" },
  "max-connections": { type: "string" },
  "request-timeout": { type: "string" },
  "not-orders": { type: "string", multiple: true },
  ...REACH_FLAGS,
  reporter: { type: "string", multiple: true },
  har: { type: "string" },
  "flush-every": { type: "string" },
  secret: { type: "string", multiple: true },
  "fail-on-violation": { type: "boolean" },
  quiet: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const;

/** The flags that set what the proxy's messages name (flag-docs.unit.test.ts holds them to FLAGS). */
export const SETTING_FLAGS: SettingNames = {
  ...PROXY_OPTION_NAMES,
  target: "--upstream",
  apiKey: "the client's own Authorization header (the proxy passes it on)",
  ...REACH_SETTING_FLAGS,
  errors: "--errors",
  allowedHosts: "--allowed-host NAME",
  corsOrigins: "--cors-origin ORIGIN",
  flushEvery: "--flush-every",
  notOrders: "--not-orders",
  port: "--port",
};

export function parseProxyOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ProxyCliOptions {
  let flags = argv;
  let values: FlagValuesOf<typeof FLAGS> | undefined;
  try {
    const split = splitAtCommand(argv);
    flags = split.options;
    values = parseFlags(flags, FLAGS, { command: "petstore-conformance proxy" });
    return readProxyOptions(values, split.command, env);
  } catch (error) {
    if (!(error instanceof UsageError) || values?.help) throw error;
    const upstream = values?.upstream ?? env.PETSTORE_UPSTREAM ?? "";
    throw new ReportedUsageError(error.message, reportersAskedFor(flags, false), observed(upstream));
  }
}

/** What the proxy's reports name as their target; an upstream refused for its credentials without them. */
export function observed(upstream: string): string {
  return `${hideUrlCredentials(upstream)} (observed through the proxy)`;
}

function readProxyOptions(
  values: FlagValuesOf<typeof FLAGS>,
  command: string[] | undefined,
  env: NodeJS.ProcessEnv,
): ProxyCliOptions {
  const reporters = parseReporters(values.reporter ?? ["pretty"], undefined);
  if (values.har !== undefined)
    refuseSharedFiles([
      ...reporters.flatMap((reporter) =>
        reporter.file ? [[`--reporter ${reporter.name}`, reporter.file] as const] : [],
      ),
      ["--har", values.har],
    ]);
  const upstream = values.upstream ?? (env.PETSTORE_UPSTREAM || undefined);
  if (values.help)
    return { proxy: { upstream: "" }, reporters, failOnViolation: false, flushEveryMs: 0, help: true };
  if (!upstream) throw new UsageError(required("--upstream", "PETSTORE_UPSTREAM", env, values.upstream));
  const port = values.port === undefined ? DEFAULT_PROXY_PORT : parsePort("--port", values.port);
  const headers = readHeaders(values, env);
  const tls = readTls(values, env);
  const readerLimits = readReaderLimits(values);
  return {
    proxy: {
      upstream,
      port,
      env,
      timeoutMs: parseDuration("--timeout", values.timeout ?? "10s"),
      ...(values.deadline !== undefined ? { deadlineMs: parseDuration("--deadline", values.deadline) } : {}),
      ...(values.host !== undefined ? { host: values.host } : {}),
      ...(values["allowed-host"] ? { allowedHosts: values["allowed-host"] } : {}),
      ...(values["cors-origin"] ? { corsOrigins: values["cors-origin"] } : {}),
      ...(values.strict ? { strict: true } : {}),
      ...(values.errors ? { errors: true } : {}),
      ...(values.har !== undefined ? { har: values.har } : {}),
      ...(values.secret ? { secretNames: values.secret } : {}),
      ...(values["not-orders"] ? { notOrders: values["not-orders"] } : {}),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(values["show-header"] ? { showHeaders: values["show-header"] } : {}),
      ...(tls ? { tls } : {}),
      ...(values.proxy !== undefined ? { proxy: values.proxy } : {}),
      ...clientBounds(values),
      ...(values["max-memory"] !== undefined
        ? { maxHeldBytes: parseByteSize("--max-memory", values["max-memory"]) }
        : {}),
      ...(values["max-body"] !== undefined
        ? { maxBodyBytes: parseByteSize("--max-body", values["max-body"]) }
        : {}),
      ...(readerLimits ? { readerLimits } : {}),
      settingNames: SETTING_FLAGS,
    },
    reporters,
    failOnViolation: values["fail-on-violation"] ?? false,
    flushEveryMs: parseDuration("--flush-every", values["flush-every"] ?? "60s"),
    ...(values.quiet ? { quiet: true } : {}),
    ...(command ? { command } : {}),
    help: false,
  };
}

/** How many clients the proxy keeps, and how long each may take to send its request. */
function clientBounds(values: {
  "max-connections"?: string | undefined;
  "request-timeout"?: string | undefined;
}): Pick<ProxyOptions, "maxConnections" | "requestTimeoutMs"> {
  return {
    ...(values["max-connections"] !== undefined
      ? { maxConnections: parseWholeNumber("--max-connections", values["max-connections"]) }
      : {}),
    ...(values["request-timeout"] !== undefined
      ? {
          requestTimeoutMs: parseDuration("--request-timeout", values["request-timeout"]),
        }
      : {}),
  };
}
