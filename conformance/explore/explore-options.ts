import type { ParseArgsConfig } from "node:util";
import { apiKeyProblem } from "../../common/bearer.ts";
import { type FlagValuesOf, parseFlags, UsageError } from "../../common/command-line.ts";
import { parseByteSize, parseDuration, parseWholeNumber } from "../../common/option-values.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import { ReportedUsageError, readLeniently, refuseSharedFiles } from "../reports/reporter-options.ts";
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
import { ConformanceUsageError } from "../target/target.ts";
import type { ExploreOptions } from "./explore.ts";
import { readOrderIdsFile } from "./orders.ts";

/** The flags that set what explore's messages name. */
const EXPLORE_SETTING_FLAGS: SettingNames = {
  ...RUN_OPTION_NAMES,
  target: "--base-url",
  apiKey: "--api-key (or PETSTORE_API_KEY)",
  session: "--session",
  hooks: "--hooks",
  maxRetryWait: "--max-retry-wait",
  ...REACH_SETTING_FLAGS,
};

export const EXPLORE_REPORTERS = ["pretty", "json", "junit", "html", "markdown", "script"] as const;
export type ExploreReporterName = (typeof EXPLORE_REPORTERS)[number];

export interface ExploreReporterTarget {
  name: ExploreReporterName;
  file?: string;
}

export interface ExploreCliOptions {
  run: ExploreOptions;
  reporters: ExploreReporterTarget[];
  help: boolean;
}

export const EXPLORE_USAGE = `Usage: petstore-conformance explore --base-url URL --api-key KEY (--order-ids FILE | --hooks FILE) [options]

Several clients send random programs of lists and cancels, at random moments, to the orders the run was
given; every history is checked against the spec's model of an order (one sequential order of the
operations, consistent with real time, must explain every answer). A failing program is shrunk to the
smallest that still fails, each candidate played again on fresh orders. It cancels only orders it was given.

Target and orders:
  --base-url URL            base address, ending in /v1            (PETSTORE_BASE_URL)
  --api-key KEY             a valid API key                        (PETSTORE_API_KEY)
  --order-ids FILE          JSON {"pending": [...], "shipped": [...], "missing": [...]}, strings of digits;
                            each pending order is cancelled in one history only
  --hooks FILE              a module whose beforeRun(context) may return { pending, shipped, missing }
                            arrays and whose provision(context, { pending, shipped }) makes fresh orders
                            as often as the search needs them (release(context, ids) is given each
                            history's orders when it is over); "mock-control" names the shipped one
                            for this project's mock
  --session NAME            send X-Mock-Session: NAME on every request (this project's mock)

The search:
  --clients N               clients at once (default 8)
  --steps N                 steps of one client's program at most (default 6)
  --parallel N              histories played at once, each on orders of its own (default 16)
  --seed N                  the programs' seed (default: random; printed, so a run can be repeated)
  --budget TIME             how long to search (default 60s; 500ms, 90s, 2m)
  --shrink-budget TIME      how long shrinking a finding may take (default 60s)
  --replays N               runs of each smaller program while shrinking, at least (default 5;
                            more, up to 40, when the failure is rare)
  --max-rate N              requests a second at most, across all clients (default: no cap)
  --allow-stale TIME        a list may show an order as it was this long before (read replicas); by
                            default a stale read is a finding

Reaching it:
  --ca-file PEM, --cert PEM --key PEM, --insecure, --proxy URL, --header 'Name: value',
  --header-from-env Name=VARIABLE, --show-header NAME
                            as for the suite (petstore-conformance --help)
  --timeout TIME            per request, without a byte from the target (default 10s; 500ms, 2m)
  --deadline TIME           per request, headers and whole body (default 2m)
  --max-retry-wait TIME     a 429 is retried after Retry-After, waiting at most this (30s)
  --max-body SIZE           read at most this much of one list (default 2GiB)
${READER_LIMITS_HELP}

Reports:
  --reporter NAME[:FILE]    pretty (default: the minimal history as a timeline, one lane per client), json
                            (the whole history), junit (one case per property), html (an SVG timeline),
                            markdown (a summary for $GITHUB_STEP_SUMMARY), script (a plain Node script
                            that plays the minimal program again); repeatable
  --help                    show this help
  --version                 print the package's version

Exit codes: 0 nothing found within the budget, 1 a finding, 2 the run itself is wrong (no orders, a refused
key, an unreachable target, answers the model decides nothing by), with one line that says what to do;
130 or 143 when SIGINT or SIGTERM stopped it, after the reports of what it covered.
`;

export const EXPLORE_FLAGS = {
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  "order-ids": { type: "string" },
  hooks: { type: "string" },
  session: { type: "string" },
  ...REACH_FLAGS,
  clients: { type: "string" },
  steps: { type: "string" },
  seed: { type: "string" },
  budget: { type: "string" },
  "shrink-budget": { type: "string" },
  replays: { type: "string" },
  parallel: { type: "string" },
  "max-rate": { type: "string" },
  "allow-stale": { type: "string" },
  "max-retry-wait": { type: "string" },
  reporter: { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

type ExploreFlagValues = FlagValuesOf<typeof EXPLORE_FLAGS>;

/** Bad usage found with the reports it asks for known: they are written with it (exit 2). */
/**
 * The run's options; a command line refused (a mistyped flag, a bad value) is thrown with the reports it
 * asks for, read leniently, so that a CI step's report files say why.
 */
export function parseExploreOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ExploreCliOptions {
  try {
    return readExploreOptions(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const asked = reportersAskedFor(argv);
    if (asked === undefined) throw error;
    throw new ReportedUsageError<ExploreReporterTarget>(
      error.message,
      asked.reporters,
      asked.target ?? env.PETSTORE_BASE_URL ?? "",
    );
  }
}

/** The reports a command line asks for and its target, read leniently; none for --help or a bad --reporter. */
function reportersAskedFor(
  argv: readonly string[],
): { reporters: ExploreReporterTarget[]; target: string | undefined } | undefined {
  const asked = readLeniently(argv, ["reporter", "base-url"]);
  if (asked.help) return undefined;
  const specs = asked.values.get("reporter") ?? [];
  try {
    return {
      reporters: parseExploreReporters(specs.length > 0 ? specs : ["pretty"]),
      target: asked.values.get("base-url")?.at(-1),
    };
  } catch {
    return undefined;
  }
}

function readExploreOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ExploreCliOptions {
  const values = parseFlags(argv, EXPLORE_FLAGS);
  const reporters = parseExploreReporters(values.reporter ?? ["pretty"]);
  if (values.help) return { run: { baseUrl: "", apiKey: "" }, reporters, help: true };
  const baseUrl = values["base-url"] ?? (env.PETSTORE_BASE_URL || undefined);
  const apiKey = values["api-key"] ?? (env.PETSTORE_API_KEY || undefined);
  if (!baseUrl) throw new UsageError(required("--base-url", "PETSTORE_BASE_URL", env, values["base-url"]));
  if (!apiKey) throw new UsageError(required("--api-key", "PETSTORE_API_KEY", env, values["api-key"]));
  const keyProblem = apiKeyProblem("--api-key", apiKey);
  if (keyProblem !== undefined) throw new UsageError(keyProblem);
  const headers = readHeaders(values, env);
  const tls = readTls(values, env);
  const readerLimits = readReaderLimits(values);
  return {
    run: {
      baseUrl,
      apiKey,
      env,
      ...orderOptions(values),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(values["show-header"] ? { showHeaders: values["show-header"] } : {}),
      ...(tls ? { tls } : {}),
      ...(values.proxy !== undefined ? { proxy: values.proxy } : {}),
      ...(readerLimits ? { readerLimits } : {}),
      ...reachPacing(values),
      ...searchOptions(values),
      settingNames: EXPLORE_SETTING_FLAGS,
      orderIdsName: "--order-ids FILE",
      clientsName: "--clients",
      budgetName: "--budget",
    },
    reporters,
    help: false,
  };
}

function orderOptions(values: ExploreFlagValues): Partial<ExploreOptions> {
  let orderIds: ExploreOptions["orderIds"];
  if (values["order-ids"] !== undefined) {
    try {
      orderIds = readOrderIdsFile(values["order-ids"], "--order-ids");
    } catch (error) {
      if (error instanceof ConformanceUsageError) throw new UsageError(error.message);
      throw error;
    }
  }
  return {
    ...(orderIds ? { orderIds } : {}),
    ...(values.hooks !== undefined ? { hooks: values.hooks } : {}),
    ...(values.session !== undefined ? { session: values.session } : {}),
  };
}

function reachPacing(values: ExploreFlagValues): Partial<ExploreOptions> {
  return {
    timeoutMs: parseDuration("--timeout", values.timeout ?? "10s"),
    deadlineMs: parseDuration("--deadline", values.deadline ?? `${DEFAULT_DEADLINE_MS}ms`),
    ...(values["max-retry-wait"] !== undefined
      ? { maxRetryWaitMs: parseDuration("--max-retry-wait", values["max-retry-wait"]) }
      : {}),
    ...(values["max-body"] !== undefined
      ? { maxBodyBytes: parseByteSize("--max-body", values["max-body"]) }
      : {}),
  };
}

function searchOptions(values: ExploreFlagValues): Partial<ExploreOptions> {
  const whole = (flag: string, text: string | undefined, maximum: number) =>
    text === undefined ? undefined : parseWholeNumber(flag, text, { maximum });
  const duration = (flag: string, text: string | undefined) =>
    text === undefined ? undefined : parseDuration(flag, text);
  const chosen = {
    clients: whole("--clients", values.clients, 256),
    steps: whole("--steps", values.steps, 1000),
    parallel: whole("--parallel", values.parallel, 256),
    seed:
      values.seed === undefined
        ? undefined
        : parseWholeNumber("--seed", values.seed, { minimum: 0, maximum: 2 ** 31 - 1 }),
    budgetMs: duration("--budget", values.budget),
    shrinkBudgetMs: duration("--shrink-budget", values["shrink-budget"]),
    replays: whole("--replays", values.replays, 1000),
    maxRate: whole("--max-rate", values["max-rate"], 1_000_000),
    allowStaleMs: duration("--allow-stale", values["allow-stale"]),
  };
  return Object.fromEntries(Object.entries(chosen).filter(([, value]) => value !== undefined));
}

function parseExploreReporters(specs: readonly string[]): ExploreReporterTarget[] {
  const reporters = specs.map((spec): ExploreReporterTarget => {
    const colon = spec.indexOf(":");
    const name = colon === -1 ? spec : spec.slice(0, colon);
    const file = colon === -1 ? undefined : spec.slice(colon + 1);
    if (!EXPLORE_REPORTERS.includes(name as ExploreReporterName))
      throw new UsageError(
        `--reporter must be one of ${EXPLORE_REPORTERS.join(", ")}, with :FILE if wanted (got "${spec}")`,
      );
    if (file === "") throw new UsageError(`--reporter ${name}: needs a file name after the colon`);
    return { name: name as ExploreReporterName, ...(file ? { file } : {}) };
  });
  if (reporters.filter((reporter) => reporter.file === undefined).length > 1)
    throw new UsageError(
      "only one report can go to standard output; give the others a file (--reporter NAME:FILE)",
    );
  refuseSharedFiles(
    reporters.flatMap(({ name, file }) =>
      file === undefined ? [] : [[`--reporter ${name}:${file}`, file] as const],
    ),
  );
  return reporters;
}
