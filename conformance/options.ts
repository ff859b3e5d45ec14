import { rootCertificates } from "node:tls";
import type { ParseArgsConfig } from "node:util";
import { isToken68, TOKEN68_RULE } from "../common/bearer.ts";
import { FileRefused, readBoundedFile } from "../common/bounded-file.ts";
import { type FlagValuesOf, parseFlags, UsageError } from "../common/command-line.ts";
import { parseByteSize, parseDuration, parseWholeNumber } from "../common/option-values.ts";
import { printable } from "../common/printable.ts";
import type { TlsOptions } from "./http-client.ts";
import { DEFAULT_DEADLINE_MS } from "./http-client.ts";
import type { ReaderLimits } from "./list-judge.ts";
import { headerProblem } from "./masked-headers.ts";
import type { ReproduceAs } from "./reproduction.ts";
import type { ConformanceOptions } from "./runner.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "./setting-names.ts";

export const REPORTERS = ["pretty", "json", "junit", "html", "markdown"] as const;
export type ReporterName = (typeof REPORTERS)[number];

/** A report to write: to FILE, or to standard output when there is none. */
export interface ReporterTarget {
  name: ReporterName;
  file?: string;
}

export interface CliOptions {
  run: ConformanceOptions;
  reporters: ReporterTarget[];
  list: boolean;
  help: boolean;
}

/** The bounds of the judge's JSON reader, which JSON itself does not set: the same flags in both commands. */
export const READER_LIMITS_HELP = `  --max-depth N             levels of nesting the judge reads at most (default 64)
  --max-string SIZE         one string's bytes at most (default 16MiB)
  --max-number N            one number's characters at most (default 4096); a body past any of these
                            is reported as not judged, naming the limit, never as invalid JSON`;

export const USAGE = `Usage: petstore-conformance --base-url URL --api-key KEY [options]
       petstore-conformance proxy --upstream URL [options]   (judges live traffic; proxy --help)

Replays the Petstore Store Orders scenarios against a /v1 deployment and checks every response against
openapi.yaml. Nothing is cancelled unless --pending-order-id (or a hook) names an order the run may cancel.

Target and orders:
  --base-url URL            base address, ending in /v1            (PETSTORE_BASE_URL)
  --api-key KEY             a valid API key                        (PETSTORE_API_KEY)
  --pending-order-id ID     a pending order the run may cancel (else that scenario is skipped)
  --shipped-order-id ID     an order that has shipped (else the 409 scenario is skipped)
  --missing-order-id ID     an id no order has (default: one absent from the list)
  --race-order-id ID        another pending order, which many clients then cancel at once (else the race
                            scenario is skipped)
  --race-concurrency N      how many at once (default 20, each on a connection of its own)
  --hooks FILE              a .js, .mjs or .ts module whose beforeRun(context) may return those ids
                            and whose afterRun(context, report) runs last; "mock-control" names the
                            shipped hook that creates them through this project's mock control API
  --session NAME            send X-Mock-Session: NAME on every request: against the project's mock,
                            a run in a new session starts from fresh fixtures

Reaching it:
  --ca-file PEM             trust this CA too (repeatable; NODE_EXTRA_CA_CERTS works as well)
  --cert PEM --key PEM      a client certificate, for gateways that ask for one
  --insecure                check no certificate (every report says so)
  --proxy URL               proxy for every request; without it http_proxy, https_proxy/HTTPS_PROXY,
                            all_proxy and no_proxy/NO_PROXY are read as curl reads them (HTTP_PROXY is not)
  --header 'Name: value'    add a header to every request (repeatable); its value is masked in reports…
  --header-from-env Name=VARIABLE
                            …as is one read from the environment, kept out of the command line
  --show-header NAME        …unless named here (repeatable)
  --timeout TIME            per request, without a byte from the target (default 10s; 500ms, 2m:
                            every duration takes its unit)
  --deadline TIME           per request, headers and whole body (default 2m)
  --concurrency N           requests in flight at most (default: as many as the scenarios send)
  --max-retry-wait TIME     a 429 is retried after Retry-After, waiting at most this (default 30s;
                            500ms, 2m)

What runs and how it is judged:
  --list                    print every scenario and exit
  --only ID[,ID…]           run only these scenarios
  --skip ID[,ID…]           do not run these
  --strict                  accept only statuses openapi.yaml documents, even for input it has no case for
  --max-body SIZE           read at most this much of one body (default 2GiB; bytes, or kB, MB, GB, KiB,
                            MiB, GiB); a larger one fails its check, naming the limit. Lists are judged
                            order by order as they stream in, so a list of any size costs little memory
  --max-memory SIZE         what the list readings a run compares may hold at once, about 32 bytes an
                            order, and bodies held while the same as one judged, an eighth (default
                            1GiB: lists of up to 4.8 million orders judged whole); a longer list is
                            judged order by order, its uniqueness and state rules skipped
${READER_LIMITS_HELP}

Reports:
  --reporter NAME[:FILE]    pretty (default), json, junit, html or markdown, to FILE or standard output;
                            repeatable: --reporter pretty --reporter junit:conformance.xml
  --output FILE             with one reporter: write it to FILE; the pretty report still goes to stdout
  --reproduce-as curl|fetch each failed check says how to send its requests again: curl commands
                            (default) or a fetch snippet; the key as $PETSTORE_API_KEY, masked headers
                            as $NAME
  --help                    show this help

Exit codes: 0 every check passed (skips allowed), 1 a check failed, 2 bad usage or a run that cannot judge
the target (unreachable, untrusted certificate, redirect, proxy refusal, failing hook).
`;

/** How a deployment is reached: the same flags for the suite and for the validating proxy. */
export const REACH_FLAGS = {
  "ca-file": { type: "string", multiple: true },
  cert: { type: "string" },
  key: { type: "string" },
  insecure: { type: "boolean" },
  proxy: { type: "string" },
  header: { type: "string", multiple: true },
  "header-from-env": { type: "string", multiple: true },
  "show-header": { type: "string", multiple: true },
  timeout: { type: "string" },
  deadline: { type: "string" },
  "max-body": { type: "string" },
  "max-depth": { type: "string" },
  "max-string": { type: "string" },
  "max-number": { type: "string" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

export function readReaderLimits(values: {
  "max-depth"?: string | undefined;
  "max-string"?: string | undefined;
  "max-number"?: string | undefined;
}): ReaderLimits | undefined {
  const limits: ReaderLimits = {
    ...(values["max-depth"] !== undefined
      ? { maxDepth: parseWholeNumber("--max-depth", values["max-depth"]) }
      : {}),
    ...(values["max-string"] !== undefined
      ? { maxStringBytes: parseByteSize("--max-string", values["max-string"]) }
      : {}),
    ...(values["max-number"] !== undefined
      ? { maxNumberChars: parseWholeNumber("--max-number", values["max-number"]) }
      : {}),
  };
  return Object.keys(limits).length > 0 ? limits : undefined;
}

export const FLAGS = {
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  "pending-order-id": { type: "string" },
  "shipped-order-id": { type: "string" },
  "missing-order-id": { type: "string" },
  "race-order-id": { type: "string" },
  "race-concurrency": { type: "string" },
  hooks: { type: "string" },
  session: { type: "string" },
  ...REACH_FLAGS,
  "max-memory": { type: "string" },
  concurrency: { type: "string" },
  "max-retry-wait": { type: "string" },
  list: { type: "boolean" },
  only: { type: "string" },
  skip: { type: "string" },
  strict: { type: "boolean" },
  reporter: { type: "string", multiple: true },
  output: { type: "string" },
  "reproduce-as": { type: "string" },
  help: { type: "boolean", short: "h" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

/** Bad usage found once the reports asked for are known: they are written with it (exit 2). */
export class ReportedUsageError extends UsageError {
  constructor(
    message: string,
    readonly reporters: ReporterTarget[],
    readonly target: string,
  ) {
    super(message);
  }
}

export function parseCliOptions(argv: readonly string[], env: NodeJS.ProcessEnv): CliOptions {
  const values = parseFlags(argv, FLAGS);
  const reporters = parseReporters(values.reporter ?? ["pretty"], values.output);
  try {
    return readRunOptions(values, reporters, env);
  } catch (error) {
    if (!(error instanceof UsageError) || values.help || values.list) throw error;
    const target = values["base-url"] ?? env.PETSTORE_BASE_URL ?? "";
    throw new ReportedUsageError(error.message, reporters, target);
  }
}

function readRunOptions(
  values: FlagValuesOf<typeof FLAGS>,
  reporters: ReporterTarget[],
  env: NodeJS.ProcessEnv,
): CliOptions {
  if (values.help || values.list) {
    return {
      run: { baseUrl: "", apiKey: "" },
      reporters,
      list: values.list ?? false,
      help: values.help ?? false,
    };
  }
  const baseUrl = values["base-url"] ?? (env.PETSTORE_BASE_URL || undefined);
  const apiKey = values["api-key"] ?? (env.PETSTORE_API_KEY || undefined);
  if (!baseUrl) throw new UsageError(required("--base-url", "PETSTORE_BASE_URL", env));
  if (!apiKey) throw new UsageError(required("--api-key", "PETSTORE_API_KEY", env));
  if (!isToken68(apiKey)) throw new UsageError(`--api-key must be ${TOKEN68_RULE}`);
  const headers = readHeaders(values, env);
  const tls = readTls(values, env);
  const readerLimits = readReaderLimits(values);
  const list = (text: string | undefined) =>
    text
      ?.split(",")
      .map((id) => id.trim())
      .filter(Boolean);
  const only = list(values.only);
  const skip = list(values.skip);
  return {
    run: {
      baseUrl,
      apiKey,
      env,
      ...orderIdOptions(values),
      ...(values.session !== undefined ? { session: values.session } : {}),
      ...(values.hooks !== undefined ? { hooks: values.hooks } : {}),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(values["show-header"] ? { showHeaders: values["show-header"] } : {}),
      ...(tls ? { tls } : {}),
      ...(values.proxy !== undefined ? { proxy: values.proxy } : {}),
      ...pacingOptions(values),
      ...(readerLimits ? { readerLimits } : {}),
      ...(values.strict ? { strict: true } : {}),
      ...(values["reproduce-as"] !== undefined
        ? { reproduceAs: parseReproduceAs(values["reproduce-as"]) }
        : {}),
      ...(only ? { only } : {}),
      ...(skip ? { skip } : {}),
      settingNames: SETTING_FLAGS,
    },
    reporters,
    list: false,
    help: false,
  };
}

type FlagValues = FlagValuesOf<typeof FLAGS>;

/** A setting given by neither its flag nor its variable: said "is empty" when the variable is set to "". */
export function required(flag: string, variable: string, env: NodeJS.ProcessEnv): string {
  return env[variable] === ""
    ? `${flag} is required, and the environment variable ${variable} is empty`
    : `${flag} (or ${variable}) is required`;
}

/** What the flags both commands share (REACH_FLAGS, the reader's limits, --max-memory) are named by in messages. */
export const REACH_SETTING_FLAGS = {
  caFile: "--ca-file",
  certAndKey: "--cert and --key",
  insecure: "--insecure",
  proxy: "--proxy",
  headers: "--header",
  deadline: "--deadline",
  maxBody: "--max-body",
  maxDepth: "--max-depth",
  maxString: "--max-string",
  maxNumber: "--max-number",
  maxMemory: "--max-memory",
} satisfies Partial<SettingNames>;

/** The flags and variables that set what the run's messages name (flag-docs.test.ts holds them to FLAGS). */
export const SETTING_FLAGS: SettingNames = {
  ...RUN_OPTION_NAMES,
  target: "--base-url",
  apiKey: "--api-key (or PETSTORE_API_KEY)",
  session: "--session",
  pendingOrderId: "--pending-order-id",
  shippedOrderId: "--shipped-order-id",
  missingOrderId: "--missing-order-id",
  raceOrderId: "--race-order-id",
  only: "--only",
  skip: "--skip",
  scenarioList: "--list",
  ...REACH_SETTING_FLAGS,
  hooks: "--hooks",
  concurrency: "--concurrency",
  maxRetryWait: "--max-retry-wait",
};

/** The orders the run is given, and how many cancels the race sends. */
function orderIdOptions(values: FlagValues): Partial<ConformanceOptions> {
  return {
    ...(values["pending-order-id"] ? { pendingOrderId: values["pending-order-id"] } : {}),
    ...(values["shipped-order-id"] ? { shippedOrderId: values["shipped-order-id"] } : {}),
    ...(values["missing-order-id"] ? { missingOrderId: values["missing-order-id"] } : {}),
    ...(values["race-order-id"] ? { raceOrderId: values["race-order-id"] } : {}),
    ...(values["race-concurrency"] !== undefined
      ? { raceConcurrency: parseWholeNumber("--race-concurrency", values["race-concurrency"]) }
      : {}),
  };
}

/** How fast and how far the run reads: timeouts, concurrency, waits on 429, memory and body bounds. */
function pacingOptions(values: FlagValues): Partial<ConformanceOptions> {
  return {
    timeoutMs: parseDuration("--timeout", values.timeout ?? "10s"),
    deadlineMs: parseDuration("--deadline", values.deadline ?? `${DEFAULT_DEADLINE_MS}ms`),
    ...(values.concurrency !== undefined
      ? { concurrency: parseWholeNumber("--concurrency", values.concurrency) }
      : {}),
    ...(values["max-retry-wait"] !== undefined
      ? { maxRetryWaitMs: parseDuration("--max-retry-wait", values["max-retry-wait"]) }
      : {}),
    ...(values["max-memory"] !== undefined
      ? { maxMemoryBytes: parseByteSize("--max-memory", values["max-memory"]) }
      : {}),
    ...(values["max-body"] !== undefined
      ? { maxBodyBytes: parseByteSize("--max-body", values["max-body"]) }
      : {}),
  };
}

function parseReproduceAs(text: string): ReproduceAs {
  if (text !== "curl" && text !== "fetch")
    throw new UsageError(`--reproduce-as takes curl or fetch (got "${text}")`);
  return text;
}

export function parseReporters(specs: readonly string[], output: string | undefined): ReporterTarget[] {
  const reporters = specs.map((spec): ReporterTarget => {
    const colon = spec.indexOf(":");
    const name = colon === -1 ? spec : spec.slice(0, colon);
    const file = colon === -1 ? undefined : spec.slice(colon + 1);
    if (!REPORTERS.includes(name as ReporterName)) {
      throw new UsageError(
        `--reporter must be one of ${REPORTERS.join(", ")}, with :FILE if wanted (got "${spec}")`,
      );
    }
    if (file === "") throw new UsageError(`--reporter ${name}: needs a file name after the colon`);
    return { name: name as ReporterName, ...(file ? { file } : {}) };
  });
  const toStdout = reporters.filter((reporter) => reporter.file === undefined);
  if (output !== undefined) {
    if (reporters.length !== 1 || toStdout.length !== 1) {
      throw new UsageError("--output goes with one --reporter NAME; for several, use --reporter NAME:FILE");
    }
    return [{ name: reporters[0]?.name as ReporterName, file: output }];
  }
  if (toStdout.length > 1) {
    throw new UsageError(
      "only one report can go to standard output; give the others a file (--reporter NAME:FILE)",
    );
  }
  return reporters;
}

/**
 * The headers of --header 'Name: value' and --header-from-env Name=VARIABLE (whose value is read from the
 * environment, so that a credential need not sit in the command line every process can read). Each is
 * checked here by the rules Node sends headers by, so that a bad one stops the command at once naming its
 * flag, never a request later.
 */
export function readHeaders(
  values: { header?: string[]; "header-from-env"?: string[] },
  env: NodeJS.ProcessEnv,
): Record<string, string> {
  const headers = parseHeaders(values.header ?? []);
  for (const spec of values["header-from-env"] ?? []) {
    const equals = spec.indexOf("=");
    const name = equals === -1 ? "" : spec.slice(0, equals).trim();
    const variable = spec.slice(equals + 1).trim();
    if (equals === -1 || variable === "" || !HEADER_NAME.test(name)) {
      throw new UsageError(
        `--header-from-env takes Name=VARIABLE (got "${printable(spec.split("=")[0] ?? "")}…")`,
      );
    }
    const value = env[variable];
    if (value === undefined || value === "") {
      throw new UsageError(
        `--header-from-env ${name}: the environment variable ${variable} is ${value === "" ? "empty" : "not set"}`,
      );
    }
    Object.assign(headers, checkedHeader("--header-from-env", name, value.trim()));
  }
  return headers;
}

// An HTTP token (RFC 9110 §5.6.2), as Node's validateHeaderName has it.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function parseHeaders(specs: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const spec of specs) {
    const colon = spec.indexOf(":");
    const name = colon === -1 ? "" : spec.slice(0, colon).trim();
    if (!HEADER_NAME.test(name)) {
      throw new UsageError(`--header takes 'Name: value' (got "${printable(spec.split(":")[0] ?? "")}…")`);
    }
    Object.assign(headers, checkedHeader("--header", name, spec.slice(colon + 1).trim()));
  }
  return headers;
}

function checkedHeader(flag: string, name: string, value: string): Record<string, string> {
  if (["authorization", "x-mock-session"].includes(name.toLowerCase())) {
    throw new UsageError(`${flag} ${name}: the run sets this one itself (--api-key, --session)`);
  }
  const problem = headerProblem(name, value);
  if (problem !== undefined) throw new UsageError(`${flag} ${problem}`);
  return { [name]: value };
}

/** TLS settings from the flags: extra CAs are added to Node's roots (and NODE_EXTRA_CA_CERTS), not instead. */
export function readTls(
  values: { "ca-file"?: string[]; cert?: string; key?: string; insecure?: boolean },
  env: NodeJS.ProcessEnv,
): TlsOptions | undefined {
  const read = (flag: string, path: string) => {
    try {
      return readBoundedFile(path, MAX_PEM_BYTES, "a PEM file");
    } catch (error) {
      if (error instanceof FileRefused) throw new UsageError(`${flag} ${path}: ${error.message}`);
      throw error;
    }
  };
  if ((values.cert === undefined) !== (values.key === undefined)) {
    throw new UsageError("--cert and --key go together");
  }
  const files = values["ca-file"] ?? [];
  const extra =
    files.length > 0 && env.NODE_EXTRA_CA_CERTS ? [read("NODE_EXTRA_CA_CERTS", env.NODE_EXTRA_CA_CERTS)] : [];
  const tls: TlsOptions = {
    ...(files.length > 0
      ? { ca: [...rootCertificates, ...extra, ...files.map((file) => read("--ca-file", file))] }
      : {}),
    ...(values.cert !== undefined ? { cert: read("--cert", values.cert) } : {}),
    ...(values.key !== undefined ? { key: read("--key", values.key) } : {}),
    ...(values.insecure ? { insecure: true } : {}),
  };
  if (Object.keys(tls).length === 0) return undefined;
  const paths = {
    ...(files[0] !== undefined ? { ca: files[0] } : {}),
    ...(values.cert !== undefined ? { cert: values.cert } : {}),
    ...(values.key !== undefined ? { key: values.key } : {}),
  };
  return Object.keys(paths).length > 0 ? { ...tls, files: paths } : tls;
}

/** A PEM bundle of every public CA is about 200 KiB; a file past this is no certificate file. */
const MAX_PEM_BYTES = 16 * 1024 * 1024;
