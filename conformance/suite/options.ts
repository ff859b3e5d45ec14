import type { ParseArgsConfig } from "node:util";
import { apiKeyProblem } from "../../common/bearer.ts";
import { type FlagValuesOf, parseFlags, UsageError } from "../../common/command-line.ts";
import { parseByteSize, parseDuration, parseWholeNumber } from "../../common/option-values.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import {
  parseReporters,
  ReportedUsageError,
  type ReporterTarget,
  reportersAskedFor,
} from "../reports/reporter-options.ts";
import type { ReproduceAs } from "../reports/reproduction.ts";
import { hideUrlCredentials } from "../target/credentials.ts";
import { DEFAULT_DEADLINE_MS } from "../target/http-client.ts";
import {
  REACH_FLAGS,
  REACH_SETTING_FLAGS,
  READER_LIMITS_HELP,
  readHeaders,
  readReaderLimits,
  readTls,
  required,
} from "../target/reach-options.ts";
import type { ConformanceOptions } from "./runner.ts";

export interface CliOptions {
  run: ConformanceOptions;
  reporters: ReporterTarget[];
  list: boolean;
  help: boolean;
}

export const USAGE = `Usage: petstore-conformance --base-url URL --api-key KEY [options]
       petstore-conformance proxy --upstream URL [options]   (judges live traffic; proxy --help)
       petstore-conformance explore --base-url URL --api-key KEY [options]
                                       (random concurrent histories against the spec's model; explore --help)

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
                            MiB, GiB); a larger one is not judged (exit 2), naming the limit. Lists
                            are judged order by order as they stream in, so a list of any size costs
                            little memory
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
  --version                 print the package's version

Exit codes: 0 every check passed (skips allowed), 1 a check failed, 2 bad usage or a run that cannot judge
the target (unreachable, untrusted certificate, redirect, proxy refusal, failing hook), or nothing failed
but a limit (--max-memory, --max-string, ...) kept checks from being judged whole.
`;

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
  version: { type: "boolean" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

export function parseCliOptions(argv: readonly string[], env: NodeJS.ProcessEnv): CliOptions {
  let values: FlagValuesOf<typeof FLAGS> | undefined;
  try {
    values = parseFlags(argv, FLAGS);
    return readRunOptions(values, parseReporters(values.reporter ?? ["pretty"], values.output), env);
  } catch (error) {
    if (!(error instanceof UsageError) || values?.help || values?.list) throw error;
    const target = hideUrlCredentials(values?.["base-url"] ?? env.PETSTORE_BASE_URL ?? "");
    throw new ReportedUsageError(error.message, reportersAskedFor(argv), target);
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
  if (!baseUrl) throw new UsageError(required("--base-url", "PETSTORE_BASE_URL", env, values["base-url"]));
  if (!apiKey) throw new UsageError(required("--api-key", "PETSTORE_API_KEY", env, values["api-key"]));
  const keyProblem = apiKeyProblem("--api-key", apiKey);
  if (keyProblem !== undefined) throw new UsageError(keyProblem);
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

/** The flags and variables that set what the run's messages name (flag-docs.unit.test.ts holds them to FLAGS). */
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
