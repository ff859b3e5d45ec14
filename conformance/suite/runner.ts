import { randomBytes } from "node:crypto";
import type { ValidateFunction } from "ajv";
import { builtInContract } from "../../contract/built-in.ts";
import { INT64_MAX, isInt64 } from "../../contract/exact-json.ts";
import { type Operation, pathOf, readOperations } from "../../contract/operations.ts";
import { type Exchange, recordResponse } from "../judging/exchange.ts";
import { IdenticalReadings } from "../judging/identical-readings.ts";
import { ListJudge, type ListVerdict, type ReaderLimits } from "../judging/list-judge.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { isListOperation, OPERATION_TRAITS, operationOfKind, traitsOf } from "../judging/operation-traits.ts";
import { checkResponse, type RecordValidators } from "../judging/response-checks.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import {
  type CheckResult,
  type RecordedRequest,
  type Report,
  type ScenarioResult,
  summarize,
} from "../reports/report.ts";
import {
  API_KEY_VARIABLE,
  headerVariable,
  type Replay,
  type ReplayTls,
  type ReproduceAs,
  renderRace,
  renderReplays,
} from "../reports/reproduction.ts";
import { BASIC_PROBE_USER } from "../target/credentials.ts";
import { createHealth } from "../target/health.ts";
import { type ConformanceHooks, type HookContext, hookId, runHook } from "../target/hooks.ts";
import { createHttpClient, type HttpClient, type SendOptions } from "../target/http-client.ts";
import type { maskedHeaders } from "../target/masked-headers.ts";
import { ignoredProxyVariables, type ProxyChoice } from "../target/proxy-env.ts";
import { checkCaller, reachTarget } from "../target/reached-target.ts";
import { redactSecrets } from "../target/redact.ts";
import { hookUnreached, keyRefused, runProblem, targetUnavailable } from "../target/run-problems.ts";
import { hookSessionWarning, sessionOfRun } from "../target/run-session.ts";
import { StartGate } from "../target/start-gate.ts";
import {
  ConformanceUsageError,
  DEFAULT_TIMEOUT_MS,
  parseTargetUrl,
  TargetUnreachableError,
  targetWarnings,
} from "../target/target.ts";
import type { TargetReach } from "../target/target-reach.ts";
import { checkRule, ordersHave, type RuleContext, ruleSnapshots } from "./rules.ts";
import {
  type AuthVariant,
  MISSING_ID,
  type OrderRef,
  type RuleName,
  SCENARIOS,
  type Scenario,
  type Step,
} from "./scenarios.ts";
import { type ListSnapshot, snapshotOf, timesListed } from "./snapshot.ts";

// The errors a run stops with and its timeout, where callers have always found them.
export { ConformanceUsageError, DEFAULT_TIMEOUT_MS, TargetUnreachableError };

/** The orders a run may name, as exact digits. */
type OrderIds = Partial<Record<"pending" | "shipped" | "missing" | "race", string>>;

export interface ConformanceOptions extends TargetReach {
  /** The deployment's base address, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  /** A pending order the run may cancel; without it nothing is cancelled. */
  pendingOrderId?: string;
  shippedOrderId?: string;
  /** A pending order for the race scenario: it is cancelled by many clients at once. */
  raceOrderId?: string;
  /** How many clients cancel the race order at once (default 20). */
  raceConcurrency?: number;
  /** An id no order has; by default one absent from the list. */
  missingOrderId?: string;
  /** Requests in flight at most (default: unbounded). */
  concurrency?: number;
  /** Only the spec's documented statuses, even for input the spec has no case for. */
  strict?: boolean;
  /** Scenario ids to run; the others are reported as skipped. */
  only?: readonly string[];
  /** Scenario ids not to run. */
  skip?: readonly string[];
  /** Provisioning hooks: a module path (.js, .mjs, .ts), "mock-control" for the shipped one, or the hooks. */
  hooks?: string | ConformanceHooks;
  scenarios?: readonly Scenario[];
  /** How failed checks say to send their requests again: curl commands (default) or a fetch snippet. */
  reproduceAs?: ReproduceAs;
  /** Sees every request and its response as sent and received (its Authorization header masked). */
  onExchange?: (exchange: Exchange) => void;
  /**
   * Sees each scenario once it is played, before the state rules that compare the run's lists (secrets
   * hidden): what a run stopped short can still report.
   */
  onScenario?: (result: ScenarioResult) => void;
  /**
   * What the lists a run keeps may hold at once (--max-memory, default 1 GiB): their ids and digests, about
   * 32 bytes an order, for the few readings the rules compare, and (an eighth) bodies held while they are
   * the same as one judged. A list with more orders than that allows is judged order by order, its
   * uniqueness and the rules that compare it skipped as not judged.
   */
  maxMemoryBytes?: number;
}

export const DEFAULT_RACE_CONCURRENCY = 20;
/** Lists sent while the race's cancels are in flight. */
const RACE_LISTS = 5;
export const DEFAULT_MAX_RETRIES = 5;
export const DEFAULT_MAX_RETRY_WAIT_MS = 30_000;

/** Select → prepare → play → judge → report: the one runner, against any target. */
export async function runConformance(options: ConformanceOptions): Promise<Report> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const run = await prepareRun(options);
  const client = await openClient(options, run);
  const health = createHealth();
  try {
    const session = openSession(options, run, client, (exchange) => {
      health.see(exchange);
      options.onExchange?.(exchange);
    });
    const initial = await session.snapshot();
    const problem =
      runProblem(initial.exchange, run.baseUrl, run.route, run.names) ??
      keyRefused(initial.exchange, run.baseUrl, run.names) ??
      targetUnavailable(initial.exchange, run.baseUrl);
    if (problem) throw new TargetUnreachableError(problem, run.secrets);
    const { ids: resolved, unshown } = resolveMissing(run, initial);
    const played = await play(
      session,
      run.selected,
      { ...resolved, unshown },
      initial,
      (result) => options.onScenario?.(playedCopy(result, run.secrets)),
      () => {
        const problem = unrouted(initial, session, run);
        if (problem) throw new TargetUnreachableError(problem, run.secrets);
      },
    );
    const judged = judgeScenarios(options, run, resolved, played);
    const verdict = health.verdict();
    const report = redactSecrets(
      {
        summary: summarize(judged),
        target: run.baseUrl.href,
        startedAt,
        ...(verdict ? { health: verdict } : {}),
        warnings: run.warnings,
        requests: client.count,
        retries: client.retries,
        durationMs: Math.round(performance.now() - started),
        scenarios: judged,
      },
      run.secrets,
    );
    await runHook(
      "afterRun",
      () => run.hooks.afterRun?.(run.hookContext, report),
      run.secrets,
      (error) => hookUnreached(error, run.baseUrl, run.names),
    );
    return report;
  } finally {
    client.close();
  }
}

/** What a run settles before its first request: the target, the scenarios, the hooks, the ids, the secrets. */
interface PreparedRun {
  baseUrl: URL;
  route: ProxyChoice;
  scenarios: readonly Scenario[];
  selected: Array<{ scenario: Scenario; reason?: string }>;
  hooks: ConformanceHooks;
  hookContext: HookContext;
  masked: ReturnType<typeof maskedHeaders>;
  /** The key, masked --header values, the mock's control token: hidden in every form a server may echo them in. */
  secrets: string[];
  ids: OrderIds;
  warnings: string[];
  /** How the caller names its settings, in every message. */
  names: SettingNames;
  /** The mock session the run is sent in: the one given, or the one the beforeRun hook made. */
  session?: string;
}

async function prepareRun(options: ConformanceOptions): Promise<PreparedRun> {
  const names = options.settingNames ?? RUN_OPTION_NAMES;
  const baseUrl = parseTargetUrl(options.baseUrl, names);
  checkCaller(options, names);
  const scenarios = options.scenarios ?? SCENARIOS;
  const selected = selectScenarios(scenarios, options.only, options.skip, names);
  const { env, route, masked, hooks, hookContext, secrets } = await reachTarget(baseUrl, options, names);
  const provided = await runHook(
    "beforeRun",
    () => hooks.beforeRun?.(hookContext),
    secrets,
    (error) => hookUnreached(error, baseUrl, names),
  );
  // Ids from options win over ids from the hook.
  const id = (flag: string, given: string | undefined, name: Parameters<typeof hookId>[1]) =>
    parseOrderIdOption(flag, given ?? hookId(provided, name));
  const ids = {
    pending: id(names.pendingOrderId, options.pendingOrderId, "pendingOrderId"),
    shipped: id(names.shippedOrderId, options.shippedOrderId, "shippedOrderId"),
    missing: id(names.missingOrderId, options.missingOrderId, "missingOrderId"),
    race: id(names.raceOrderId, options.raceOrderId, "raceOrderId"),
  };
  refuseSharedIds(ids, names);
  const session = sessionOfRun(options.session, provided, names);
  const warnings = [
    ...ignoredProxyVariables(env),
    ...targetWarnings(baseUrl, options.tls?.insecure, names, { role: "the base URL", who: "the run" }),
    ...(session !== options.session ? [hookSessionWarning(session, names)] : []),
  ];
  if (session !== undefined) hookContext.session = session;
  const run = {
    baseUrl,
    route,
    scenarios,
    selected,
    hooks,
    hookContext,
    masked,
    secrets,
    ids,
    warnings,
    names,
  };
  return session !== undefined ? { ...run, session } : run;
}

/** The key, masked --header values, the mock's control token: what no report, message or hook error shows. */
function openClient(options: ConformanceOptions, run: PreparedRun): Promise<HttpClient> {
  const { masked } = run;
  return createHttpClient(run.baseUrl, {
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
    commonHeaders: {
      ...options.headers,
      ...(run.session !== undefined ? { "x-mock-session": run.session } : {}),
    },
    secretHeaders: masked.names,
    replaySecrets: new Map([
      [options.apiKey, API_KEY_VARIABLE],
      ...masked.entries.map(([name, value]): [string, string] => [value, headerVariable(name)]),
    ]),
    ...(options.tls ? { tls: options.tls } : {}),
    ...(run.route.proxy ? { proxy: run.route.proxy } : {}),
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    retry: {
      max: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      maxWaitMs: options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS,
    },
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    names: run.names,
  });
}

function openSession(
  options: ConformanceOptions,
  run: PreparedRun,
  client: HttpClient,
  onExchange: (exchange: Exchange) => void,
): Session {
  const contract = options.contract ?? builtInContract();
  const maxMemory = options.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES;
  const heldBodies = Math.floor(maxMemory * HELD_BODIES_SHARE);
  return new Session(
    client,
    readOperations(contract),
    options.apiKey,
    {
      errorRecord: contract.schema("Error"),
      orderRecord: contract.schema("Order"),
      orderPlan: contract.flatPlan("Order"),
      names: run.names,
    },
    // The orders the run names are kept whole in each reading of the list, for messages that show them.
    namedIds(run.ids),
    options.strict ?? false,
    onExchange,
    options.raceConcurrency ?? DEFAULT_RACE_CONCURRENCY,
    Math.floor((maxMemory - heldBodies) / (INDEXED_ORDER_BYTES * LISTS_HELD_AT_ONCE)),
    new IdenticalReadings(new MemoryBudget(heldBodies)),
    options.readerLimits,
  );
}

/** The orders the run names, whichever role each has. */
function namedIds(ids: OrderIds): Set<string> {
  return new Set(Object.values(ids).filter((id): id is string => id !== undefined));
}

/**
 * The ids with the missing order settled: given, or one the first list shows absent. When no list could be
 * read whole by id, no id is shown absent and none is assumed: `unshown` says why, for the steps that need one.
 */
function resolveMissing(run: PreparedRun, initial: ListSnapshot): { ids: OrderIds; unshown?: string } {
  const { ids } = run;
  if (ids.missing !== undefined) return { ids };
  const absent = absentId(initial, namedIds(ids));
  if (absent !== undefined) return { ids: { ...ids, missing: absent } };
  const why = initial.orders
    ? `${ordersHave(initial.unindexed ?? 0)} no int64 id, so the list could not be read whole by id`
    : (initial.notKept ?? "the list could not be read");
  const unshown = `no id was shown absent (${why}); ${run.names.missingOrderId} names one`;
  run.warnings.push(`${unshown}: what needs an order that does not exist is skipped`);
  return { ids, unshown };
}

/**
 * A base address at which nothing of the API is routed, said with its likely fix; undefined otherwise. Its
 * sign: the first list was answered 404, and so was every request sent with the key until then, before any
 * order is cancelled. A deployment that routes the API but lacks the list answers one of them otherwise (a
 * malformed id's 400, say) and is judged; answers without the key say nothing, since a gateway may refuse
 * them before it routes.
 */
function unrouted(
  initial: ListSnapshot,
  session: { routed: boolean; keyedOthers: number },
  run: PreparedRun,
): string | undefined {
  if (session.routed || initial.exchange.response?.status !== 404) return undefined;
  const tried = new URL(initial.exchange.request.path, run.baseUrl).href;
  // With no other request sent with the key (--only, --skip), a list the deployment lacks looks the same.
  const seen =
    session.keyedOthers > 0
      ? `as was every request sent with the key: nothing of the API answers at ${run.baseUrl.href}`
      : `and no other request was sent with the key to tell a wrong address from a missing list`;
  return `GET ${tried} was answered 404, ${seen}. ${likelyFix(run.baseUrl, run.names.target)}; nothing was judged`;
}

/** What a base address the API is not routed at most likely should be. */
function likelyFix(base: URL, option: string): string {
  const path = base.pathname.replace(/\/+$/, "");
  const endpoint = /\/store\/orders(?:\/.*)?$/.exec(path);
  if (endpoint)
    return `It names an endpoint, not the base address: use ${option} ${base.origin}${path.slice(0, endpoint.index)}`;
  if (!/\/v\d+$/.test(path))
    return `The API's paths follow the base address, usually ending in /v1: use ${option} ${base.origin}${path}/v1 if it is served there`;
  return `Is ${option} right? The API's paths follow it`;
}

/** What playing the scenarios gave: their runs, and the readings of the list around them. */
interface Played {
  runs: ScenarioRun[];
  notSelected: ScenarioResult[];
  initial: ListSnapshot;
  afterRefused: ListSnapshot;
  final: ListSnapshot;
  /** Whether the race scenario was selected, so that its order is left out of the other rules. */
  raceSelected: boolean;
}

/** Phase 1 (changes nothing), a reading, phase 2 (cancels), a reading; scenarios of a phase at once. */
async function play(
  session: Session,
  selected: PreparedRun["selected"],
  resolved: OrderIds & { unshown?: string | undefined },
  initial: ListSnapshot,
  onPlayed: (result: ScenarioResult) => void,
  /** Between the phases, before any order is cancelled: throws to end the run there. */
  beforeCancels: () => void,
): Promise<Played> {
  const chosen = selected.filter(({ reason }) => reason === undefined).map(({ scenario }) => scenario);
  const runPhase = (phase: number) =>
    Promise.all(
      chosen
        .filter((scenario) => scenario.phase === phase)
        .map(async (scenario) => {
          const played = await session.run(scenario, resolved, initial, resolved.unshown);
          onPlayed(played.result);
          return played;
        }),
    );
  const phaseOne = await runPhase(1);
  const afterRefused = await session.snapshot();
  beforeCancels();
  // With no cancel to play, nothing is sent between the two readings: one read serves both.
  const cancelsPlayed = chosen.some(
    (scenario) =>
      scenario.phase === 2 && (scenario.needs === undefined || resolved[scenario.needs] !== undefined),
  );
  const phaseTwo = await runPhase(2);
  const final = cancelsPlayed ? await session.snapshot() : afterRefused;
  const notSelected = selected
    .filter(({ reason }) => reason !== undefined)
    .map(
      ({ scenario, reason }): ScenarioResult => ({
        id: scenario.id,
        title: scenario.title,
        status: "skipped",
        reason: reason as string,
        checks: [],
      }),
    );
  return {
    runs: [...phaseOne, ...phaseTwo],
    notSelected,
    initial,
    afterRefused,
    final,
    raceSelected: chosen.some((scenario) => scenario.id === "cancel-race"),
  };
}

/**
 * Each played scenario with its state rules added and its failures given reproductions, a defect already
 * said being said once; the skipped ones beside them, in the scenarios' order.
 */
function judgeScenarios(
  options: ConformanceOptions,
  run: PreparedRun,
  resolved: OrderIds,
  played: Played,
): ScenarioResult[] {
  const { initial, afterRefused, final } = played;
  const replayTls: ReplayTls = {
    ...(options.tls?.insecure ? { insecure: true } : {}),
    ...(options.tls?.files?.ca ? { caFile: options.tls.files.ca } : {}),
    ...(options.tls?.files?.cert ? { certFile: options.tls.files.cert } : {}),
    ...(options.tls?.files?.key ? { keyFile: options.tls.files.key } : {}),
  };
  const reproduce = (replays: Array<Replay | undefined>, together?: number) => {
    const known = [...new Set(replays)].filter((replay): replay is Replay => replay !== undefined);
    const as = options.reproduceAs ?? "curl";
    if (together !== undefined && known.length === 1)
      return renderRace(known[0] as Replay, together, as, replayTls);
    return known.length > 0 ? renderReplays(known, as, replayTls) : undefined;
  };
  const context: RuleContext = {
    initial,
    afterRefused,
    final,
    ...(resolved.pending ? { pendingId: resolved.pending } : {}),
    ...(resolved.shipped ? { shippedId: resolved.shipped } : {}),
    ...(resolved.race && played.raceSelected ? { raceId: resolved.race } : {}),
  };
  // Before the rules are added and failures get their reproductions: a defect already said is said once.
  const once = sayOnce(played.runs.map(({ result }) => result));
  const judged = played.runs.map((scenarioRun, index) => {
    const result = once[index] as ScenarioResult;
    if (result.status === "skipped") return result;
    return judgeScenario(
      scenarioRun,
      result,
      {
        ...context,
        ...(scenarioRun.scenarioList ? { scenarioList: scenarioRun.scenarioList } : {}),
        ...(scenarioRun.answers ? { scenarioAnswers: scenarioRun.answers } : {}),
      },
      options.strict ?? false,
      reproduce,
    );
  });
  const results = [...judged, ...played.notSelected];
  const order = new Map(run.scenarios.map((scenario, index) => [scenario.id, index]));
  return results.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
}

function judgeScenario(
  { scenario, scenarioList, replays, listedOnceAfter }: ScenarioRun,
  result: ScenarioResult,
  context: RuleContext,
  strict: boolean,
  reproduce: (replays: Array<Replay | undefined>, together?: number) => string | undefined,
): ScenarioResult {
  // Under the default reading a list with parameters may be refused (400); then there is no list to compare.
  const listRefused = scenarioList?.exchange.response?.status;
  const ruleCheck = (rule: RuleName): CheckResult =>
    rule === "list-ignores-paging-parameters" && !strict && listRefused === 400
      ? {
          id: `${scenario.id}.${rule}`,
          status: "skipped",
          message: "not compared: the parameters were refused with 400, which the default reading accepts",
        }
      : withReproduction(checkRule(rule, scenario.id, context), () => {
          // The list before, the scenario's own requests, the list after: what shows the finding.
          const [before, after] = ruleSnapshots(rule, context);
          return reproduce([before?.exchange.request.replay, ...replays, after?.exchange.request.replay]);
        });
  const checks = [
    ...result.checks,
    // The race's order is read in the final list: nothing after the race touches it.
    ...(listedOnceAfter ? [listedOnce(context.final, listedOnceAfter.orderId, listedOnceAfter.checkId)] : []),
    ...(scenario.rules ?? []).map(ruleCheck),
  ].map((check) =>
    check.status === "failed" && check.reproduce === undefined
      ? withReproduction(check, () => reproduce([check.request?.replay], RACED.get(check)))
      : check,
  );
  // The replays became commands; reports keep the masked request only.
  for (const check of checks) if (check.request?.replay) check.request = withoutReplay(check.request);
  return {
    ...result,
    checks,
    status: checks.some((check) => check.status === "failed") ? "failed" : "passed",
  } as ScenarioResult;
}

/** Every scenario with, for those not to run, the reason they are skipped. */
function selectScenarios(
  scenarios: readonly Scenario[],
  only: readonly string[] | undefined,
  skip: readonly string[] | undefined,
  names: SettingNames,
): Array<{ scenario: Scenario; reason?: string }> {
  const known = new Set(scenarios.map((scenario) => scenario.id));
  for (const [name, list] of [
    [names.only, only],
    [names.skip, skip],
  ] as const) {
    const unknown = (list ?? []).filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new ConformanceUsageError(
        `${name} names no scenario ${unknown.join(", ")} (scenarios: ${[...known].join(", ")}; see ${names.scenarioList})`,
      );
    }
  }
  return scenarios.map((scenario) =>
    only && !only.includes(scenario.id)
      ? { scenario, reason: `not selected (${names.only} ${only.join(",")})` }
      : skip?.includes(scenario.id)
        ? { scenario, reason: `skipped with ${names.skip}` }
        : { scenario },
  );
}

interface ScenarioRun {
  scenario: Scenario;
  result: ScenarioResult;
  scenarioList?: ListSnapshot;
  /** Every request the scenario sent, as it can be sent again. */
  replays: Replay[];
  /** An order to find listed at most once in the list read after the cancels, and the check that says so. */
  listedOnceAfter?: { orderId: string; checkId: string };
  /** The status each of the scenario's steps was answered with, in order; null for none. */
  answers?: Array<number | null>;
}

/** A race's verdict, with how many requests went at once: its reproduction sends as many together. */
const RACED = new WeakMap<CheckResult, number>();

/** The reading of the list a body check judged: one body, one verdict object (identical-readings.ts). */
const READING = new WeakMap<CheckResult, ListVerdict>();
// What a list's body shows, as against what its headers or status show.
const BODY_CHECKS = new Set(["body", "unique-ids", "no-status-field"]);

function readingOf(checks: CheckResult[], exchange: Exchange): CheckResult[] {
  const list = exchange.response?.list;
  if (list) for (const check of checks) if (BODY_CHECKS.has(kindOf(check))) READING.set(check, list);
  return checks;
}

function kindOf(check: CheckResult): string {
  return check.id.slice(check.id.lastIndexOf(".") + 1);
}

/**
 * One defect, reported once: a body check failed on a reading whose verdict an earlier failed check of the
 * same kind reported (the same bytes, read again) says so in one line, with no body, and is not judged again.
 */
function sayOnce(results: readonly ScenarioResult[]): ScenarioResult[] {
  const reported = new Map<ListVerdict, Map<string, string>>();
  return results.map((result) => {
    if (result.status === "skipped") return result;
    const checks = result.checks.map((check): CheckResult => {
      const list = READING.get(check);
      if (!list || check.status !== "failed") return check;
      const kinds = reported.get(list) ?? new Map<string, string>();
      reported.set(list, kinds);
      const earlier = kinds.get(kindOf(check));
      if (earlier === undefined) {
        kinds.set(kindOf(check), check.id);
        return check;
      }
      return {
        id: check.id,
        status: "skipped",
        message: `not judged again: the same list, byte for byte, as ${earlier}, which reports it`,
        ...(check.spec !== undefined ? { spec: check.spec } : {}),
      };
    });
    return {
      ...result,
      checks,
      status: checks.some((check) => check.status === "failed") ? "failed" : "passed",
    };
  });
}

const RACE_LISTS_RULE =
  "§4.1, §2: a list is an array of Order records, each order once, even while orders change";

/** Many answers' checks as one each: a tally when all passed, every failure (the first five) when not. */
function collapse(results: ReadonlyArray<{ checks: CheckResult[] }>): CheckResult[] {
  const byId = new Map<string, CheckResult[]>();
  for (const result of results)
    for (const check of result.checks) {
      const same = byId.get(check.id);
      if (same) same.push(check);
      else byId.set(check.id, [check]);
    }
  return [...byId.entries()].flatMap(([id, checks]) => {
    const failed = checks.filter((check) => check.status === "failed");
    if (failed.length > 0) return failed.slice(0, 5);
    // One answer not judged whole leaves the check not judged whole, whatever the others showed.
    const notJudged = checks.filter((check) => check.notJudged);
    if (notJudged.length > 0)
      return [
        {
          ...(notJudged[0] as CheckResult),
          id,
          message: `${notJudged.length} of ${checks.length} answers ${notJudged[0]?.message}`,
        },
      ];
    return [
      {
        ...(checks[0] as CheckResult),
        id,
        message: `${checks.length} of ${checks.length} answers: ${checks[0]?.message}`,
      },
    ];
  });
}

/**
 * Exactly one of the concurrent cancels may be 204; and how close together they went out. A cancel the
 * run's own --deadline cut may have been a 204: with one, the race is judged only when two 204s came.
 */
function raceVerdict(
  cancels: readonly Exchange[],
  checkId: string,
  because: string,
  names: SettingNames,
): CheckResult {
  const statuses = new Map<string, number>();
  for (const exchange of cancels) {
    const status = exchange.response ? String(exchange.response.status) : "no answer";
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  const sent = cancels.map((exchange) => exchange.sentAt).filter((at): at is number => at !== undefined);
  const spread = sent.length > 1 ? Math.max(...sent) - Math.min(...sent) : 0;
  const tally = [...statuses].map(([status, count]) => `${status}×${count}`).join(" ");
  const went = `${cancels.length} cancels sent within ${spread.toFixed(1)} ms of each other (${tally})`;
  const cancelled = statuses.get("204") ?? 0;
  const id = `${checkId}.one-204`;
  const cut = cancels.filter((exchange) => !exchange.response && exchange.limit === "deadline").length;
  if (cut > 0 && cancelled < 2)
    return {
      id,
      status: "skipped",
      message: `not judged: ${cut === 1 ? "1 cancel" : `${cut} cancels`} got no answer within the run's limit and may have been a 204; raise ${names.deadline} to judge it: ${went}`,
      spec: because,
      notJudged: true,
    };
  if (cancelled === 1) return { id, status: "passed", message: `exactly one 204: ${went}`, spec: because };
  const winner = cancels.find((exchange) => exchange.response?.status === 204) ?? cancels[0];
  const failed: CheckResult = {
    id,
    status: "failed",
    message:
      cancelled === 0
        ? `no cancel was 204: ${went}`
        : `${cancelled} cancels were 204, so the order was cancelled ${cancelled} times: ${went}`,
    spec: because,
    ...(winner ? { request: winner.request } : {}),
    ...(winner?.response ? { response: recordResponse(winner.response) } : {}),
  };
  RACED.set(failed, cancels.length);
  return failed;
}

/** After the race the order is listed at most once (the spec does not say whether a cancelled one stays). */
function listedOnce(after: ListSnapshot, orderId: string, checkId: string): CheckResult {
  const id = `${checkId}.listed-once`;
  const spec = "§2: id is the unique order identifier; §4.1: the list returns every order placed";
  if (after.notKept !== undefined)
    return { id, status: "skipped", message: `not judged: ${after.notKept}`, spec, notJudged: true };
  if (!after.orders)
    return {
      id,
      status: "failed",
      message: `cannot check: listing the orders failed (${after.problem})`,
      spec,
    };
  const times = timesListed(after, orderId);
  if (times <= 1)
    return {
      id,
      status: "passed",
      message: times === 1 ? `order ${orderId} listed once, id exact` : `order ${orderId} no longer listed`,
      spec,
    };
  return {
    id,
    status: "failed",
    message: `order ${orderId} is listed ${times} times after the concurrent cancels`,
    spec,
    request: after.exchange.request,
    ...(after.exchange.response ? { response: recordResponse(after.exchange.response) } : {}),
  };
}

function withReproduction(check: CheckResult, reproduce: () => string | undefined): CheckResult {
  if (check.status !== "failed") return check;
  const commands = reproduce();
  return commands === undefined ? check : { ...check, reproduce: commands };
}

/** A played scenario as a report may show it: a copy, its requests without replays, secrets hidden. */
function playedCopy(result: ScenarioResult, secrets: readonly string[]): ScenarioResult {
  const checks = result.checks.map((check) =>
    check.request ? { ...check, request: withoutReplay(check.request) } : { ...check },
  );
  const [copy] = redactSecrets(
    { scenarios: [{ ...result, checks: structuredClone(checks) }] },
    secrets,
  ).scenarios;
  return copy as ScenarioResult;
}

function withoutReplay({ replay: _replay, ...request }: RecordedRequest): RecordedRequest {
  return request;
}

/** What the lists a run keeps may hold at once, by default. */
export const DEFAULT_MAX_MEMORY_BYTES = 1024 * 1024 * 1024;
/** What one order costs a list's index of ids and digests, about. */
const INDEXED_ORDER_BYTES = 32;
// Readings of the list a run holds at most at once: before and after the refusals, the last, a scenario's
// own and the one being read, with one to spare.
const LISTS_HELD_AT_ONCE = 6;
/** The share of --max-memory for bodies held while they are the same as one judged (identical-readings.ts). */
const HELD_BODIES_SHARE = 1 / 8;

class Session {
  readonly #unknownKey = `unknown-${randomBytes(12).toString("hex")}`;
  readonly #listJudge = () =>
    this.readings.reading(
      () =>
        new ListJudge({
          validateOrder: this.validators.orderRecord as ValidateFunction,
          orderPlan: this.validators.orderPlan,
          watch: this.watched,
          maxIndexedOrders: this.maxIndexedOrders,
          ...this.readerLimits,
          // Each reading's own, as large as the share for held bodies: a wide order or a long string is
          // judged in part past it rather than built whole. A reading cut short gives nothing back to share.
          memory: new MemoryBudget(this.readings.account.limit),
        }),
    );

  constructor(
    private readonly client: HttpClient,
    private readonly operations: Map<string, Operation>,
    private readonly apiKey: string,
    private readonly validators: RecordValidators,
    private readonly watched: ReadonlySet<string>,
    private readonly strict: boolean,
    private readonly onExchange: ((exchange: Exchange) => void) | undefined,
    private readonly raceConcurrency: number,
    /** Orders of one list whose ids are kept, so that the lists a run holds at once stay within its memory. */
    private readonly maxIndexedOrders: number,
    /** The readings of the list so far, so that a body the same as one judged is not judged again. */
    private readonly readings: IdenticalReadings,
    private readonly readerLimits: ReaderLimits = {},
  ) {}

  /** How the run's messages name its settings. */
  get #names(): SettingNames {
    return this.validators.names ?? RUN_OPTION_NAMES;
  }

  /** Whether an answer to a request with the run's key was other than 404: the target routes the API there. */
  routed = false;
  /** Answers to requests sent with the key other than lists: whether a 404 list could be told from a wrong address. */
  keyedOthers = 0;

  /** The reading of the list that hit --deadline or --max-body: every later one would hit it again. */
  #limitHit: Exchange | undefined;

  /**
   * Once a reading hit a limit of the run, what stands for every later one: that reading, saying why the
   * list is not read again. Undefined until then.
   */
  #notReadAgain(): (ListSnapshot & { notKept: string }) | undefined {
    const hit = this.#limitHit;
    if (!hit) return undefined;
    const limit =
      hit.limit === "deadline"
        ? this.#names.deadline
        : hit.limit === "not-read"
          ? "what this tool reads"
          : this.#names.maxBody;
    return {
      exchange: hit,
      notKept: `the list is not read again, since reading it hit ${limit} (${hit.response?.cut ?? hit.error}); see list-orders`,
    };
  }

  async snapshot(): Promise<ListSnapshot> {
    const notAgain = this.#notReadAgain();
    if (notAgain !== undefined) return notAgain;
    const operation = operationOfKind(this.operations, "list");
    const exchange = await this.send(operation, pathOf(operation), "valid");
    const checked = checkResponse(exchange, operation, [200], "", "snapshot", this.validators);
    return snapshotOf(exchange, checked.status, checked.list, this.#names);
  }

  /**
   * Plays a scenario. `listed`: the reading of the list taken before the run, which a plain listOrders step
   * is judged on rather than reading the whole list again (the same request, already answered).
   */
  async run(scenario: Scenario, ids: OrderIds, listed: ListSnapshot, unshown?: string): Promise<ScenarioRun> {
    const base = { id: scenario.id, title: scenario.title };
    if (scenario.needs && !ids[scenario.needs]) {
      const reason = `no --${scenario.needs}-order-id given: the run cancels or refuses only orders named for it`;
      return { scenario, result: { ...base, status: "skipped", reason, checks: [] }, replays: [] };
    }
    const checks: CheckResult[] = [];
    const replays: Replay[] = [];
    let scenarioList: ListSnapshot | undefined;
    let listedOnceAfter: ScenarioRun["listedOnceAfter"];
    const answers: Array<number | null> = [];
    for (const step of scenario.steps) {
      const checkId = `${scenario.id}.${step.name}`;
      const path = this.pathOf(step, ids);
      if (path === undefined) {
        const ref = typeof step.order === "string" ? step.order : "missing";
        const why = ref === "missing" && unshown !== undefined ? unshown : `no --${ref}-order-id given`;
        checks.push({ id: checkId, status: "skipped", message: `skipped: ${why}` });
        continue;
      }
      const operation = this.operation(step.operation);
      if (step.race) {
        checks.push(...(await this.race(step, operation, path, checkId, replays)));
        listedOnceAfter = { orderId: ids.race as string, checkId };
        continue;
      }
      const played = await this.#playStep(step, operation, path, checkId, listed, replays);
      checks.push(...played.checks);
      answers.push(played.answered ?? null);
      if (played.list) scenarioList = played.list;
    }
    const failed = checks.some((check) => check.status === "failed");
    const skippedSteps = checks.filter((check) => check.status === "skipped").length;
    // Every step without its order: the scenario itself is skipped, with the reason its steps give.
    const allSkipped = skippedSteps === checks.length && checks.length > 0;
    const reason = allSkipped
      ? (checks[0] as CheckResult).message.replace(/^skipped: /, "")
      : `${skippedSteps} step(s) skipped for lack of an order id`;
    return {
      scenario,
      result: {
        ...base,
        status: failed ? "failed" : allSkipped ? "skipped" : "passed",
        ...(skippedSteps > 0 ? { reason } : {}),
        checks,
      },
      ...(scenarioList ? { scenarioList } : {}),
      ...(listedOnceAfter ? { listedOnceAfter } : {}),
      replays,
      answers,
    };
  }

  /** One step sent (or, for the plain list, taken from the reading before the run) and checked. */
  async #playStep(
    step: Step,
    operation: Operation,
    path: string,
    checkId: string,
    listed: ListSnapshot,
    replays: Replay[],
  ): Promise<{ checks: CheckResult[]; list?: ListSnapshot; answered?: number }> {
    const validList = OPERATION_TRAITS[step.operation].kind === "list" && (step.auth ?? "valid") === "valid";
    const plainList = validList && !step.query;
    const notAgain = validList && !plainList ? this.#notReadAgain() : undefined;
    if (notAgain !== undefined) {
      const message = `not judged: ${notAgain.notKept}`;
      return { checks: [{ id: `${checkId}.status`, status: "skipped", message }], list: notAgain };
    }
    const exchange = plainList ? listed.exchange : await this.send(operation, path, step.auth ?? "valid");
    if (exchange.request.replay) replays.push(exchange.request.replay);
    const reading = this.strict || !step.lenient ? step : step.lenient;
    const checked = checkResponse(
      exchange,
      operation,
      reading.expect,
      reading.because,
      checkId,
      this.validators,
    );
    const checks = readingOf(checked.checks, exchange);
    const answered = exchange.response?.status;
    return {
      checks,
      ...(validList ? { list: snapshotOf(exchange, checked.status, checked.list, this.#names) } : {}),
      ...(answered !== undefined ? { answered } : {}),
    };
  }

  private pathOf(step: Step, ids: OrderIds): string | undefined {
    const query = step.query ? `?${step.query}` : "";
    const operation = this.operation(step.operation);
    const parameter = traitsOf(operation)?.orderIdParameter;
    if (parameter === undefined) return `${pathOf(operation)}${query}`;
    const segment = orderSegment(step.order ?? "missing", ids);
    return segment === undefined ? undefined : `${pathOf(operation, { [parameter]: segment })}${query}`;
  }

  private operation(operationId: string): Operation {
    const operation = this.operations.get(operationId);
    if (!operation) throw new Error(`openapi.yaml has no operation ${operationId}`);
    return operation;
  }

  /**
   * The same cancel from many clients at once, each on a connection of its own, with lists sent among
   * them: every answer through the usual checks, then exactly one 204 and well-formed lists (that the order
   * is listed at most once afterwards is read in the list read after the cancels).
   */
  private async race(
    step: Step,
    operation: Operation,
    path: string,
    checkId: string,
    replays: Replay[],
  ): Promise<CheckResult[]> {
    const list = operationOfKind(this.operations, "list");
    const notAgain = this.#notReadAgain();
    const listsAmong = notAgain === undefined ? RACE_LISTS : 0;
    const together = new StartGate(this.raceConcurrency + listsAmong);
    const [cancels, lists] = await Promise.all([
      Promise.all(
        Array.from({ length: this.raceConcurrency }, () => this.send(operation, path, "valid", { together })),
      ),
      Promise.all(
        Array.from({ length: listsAmong }, () => this.send(list, pathOf(list), "valid", { together })),
      ),
    ]);
    const [first] = cancels;
    if (first?.request.replay) replays.push(first.request.replay);
    const checks = [
      ...collapse(
        cancels.map((exchange) =>
          checkResponse(exchange, operation, step.expect, step.because, checkId, this.validators),
        ),
      ),
      ...collapse(
        lists.map((exchange) => ({
          checks: readingOf(
            checkResponse(exchange, list, [200], RACE_LISTS_RULE, `${checkId}.list-during`, this.validators)
              .checks,
            exchange,
          ),
        })),
      ),
      ...(notAgain !== undefined
        ? [
            {
              id: `${checkId}.list-during`,
              status: "skipped" as const,
              message: `not judged: ${notAgain.notKept}`,
            },
          ]
        : []),
    ];
    checks.push(raceVerdict(cancels, checkId, step.because, this.#names));
    return checks;
  }

  private async send(
    operation: Operation,
    path: string,
    auth: AuthVariant,
    options?: Pick<SendOptions, "fresh" | "together">,
  ): Promise<Exchange> {
    const headers: Record<string, string> = { accept: "application/json" };
    const authorization = this.authorization(auth);
    if (authorization !== undefined) headers.authorization = authorization;
    const exchange = await this.client.send(operation.method, path, headers, {
      ...options,
      ...(isListOperation(operation) ? { listJudge: this.#listJudge } : {}),
    });
    if (isListOperation(operation) && auth === "valid" && exchange.limit !== undefined)
      this.#limitHit ??= exchange;
    const status = exchange.response?.status;
    if (auth === "valid" && status !== undefined && status !== 404) this.routed = true;
    if (auth === "valid" && status !== undefined && !isListOperation(operation)) this.keyedOthers++;
    this.onExchange?.(exchange);
    return exchange;
  }

  private authorization(auth: AuthVariant): string | undefined {
    switch (auth) {
      case "valid":
        return `Bearer ${this.apiKey}`;
      case "none":
        return undefined;
      case "basic":
        return `Basic ${Buffer.from(`${BASIC_PROBE_USER}:${this.apiKey}`).toString("base64")}`;
      case "empty-bearer":
        return "Bearer ";
      case "unknown-key":
        return `Bearer ${this.#unknownKey}`;
    }
  }
}

function orderSegment(ref: OrderRef, ids: OrderIds): string | undefined {
  if (typeof ref === "string") return ids[ref];
  // A malformed id built on the absent one: a server that reads it leniently reaches no real order.
  if (!ref.raw.includes(MISSING_ID)) return ref.raw;
  return ids.missing === undefined ? undefined : ref.raw.replace(MISSING_ID, ids.missing);
}

/**
 * The id cancel-not-found sends its DELETE to: one the first list shows absent, since a run must never
 * cancel an order it was not given. A list read whole by id shows one past the largest (or, when the largest
 * is the top of int64, the first gap); any other list shows none, and none is guessed: a guess may be a real
 * order. Never one of the ids the run was given.
 */
function absentId(initial: ListSnapshot, given: ReadonlySet<string>): string | undefined {
  const { orders } = initial;
  if (orders === undefined || initial.unindexed) return undefined;
  const free = (id: bigint) => !given.has(String(id)) && !orders.has(String(id));
  if ((orders.largest ?? 0n) < INT64_MAX) {
    for (let id = (orders.largest ?? 0n) + 1n; id <= INT64_MAX; id++) if (free(id)) return String(id);
  }
  for (let id = 1n; ; id++) if (free(id)) return String(id);
}

/**
 * Each order plays one part: an order given as both the pending one and the race's would be cancelled by
 * the one scenario and found not pending by the other, a false failure. Ids are compared as int64 values.
 */
function refuseSharedIds(ids: OrderIds, names: SettingNames): void {
  const parts = [
    [names.pendingOrderId, ids.pending],
    [names.shippedOrderId, ids.shipped],
    [names.missingOrderId, ids.missing],
    [names.raceOrderId, ids.race],
  ] as const;
  const seen = new Map<string, string>();
  for (const [name, id] of parts) {
    if (id === undefined) continue;
    const other = seen.get(id);
    if (other !== undefined)
      throw new ConformanceUsageError(
        `${other} and ${name} (or the ids the beforeRun hook gave) name the same order (${id}): each part needs an order of its own`,
      );
    seen.set(id, name);
  }
}

function parseOrderIdOption(flag: string, text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text) || !isInt64(BigInt(text))) {
    throw new ConformanceUsageError(`${flag} must be an int64 integer (got "${text}")`);
  }
  return BigInt(text).toString();
}
