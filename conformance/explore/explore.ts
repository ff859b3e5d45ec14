import { randomInt } from "node:crypto";
import type { ValidateFunction } from "ajv";
import { builtInContract } from "../../contract/built-in.ts";
import type { ControlTransport } from "../../contract/control-client.ts";
import type { Exchange } from "../judging/exchange.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import type { ListsNotJudged } from "../reports/outcome.ts";
import { API_KEY_VARIABLE, headerVariable } from "../reports/reproduction.ts";
import {
  CONTROL_TRANSPORT,
  type ConformanceHooks,
  type HookContext,
  type ProvidedIds,
} from "../target/hook-types.ts";
import { HookError, runHook } from "../target/hooks.ts";
import { type ClientOptions, createHttpClient, type HttpClient } from "../target/http-client.ts";
import type { maskedHeaders } from "../target/masked-headers.ts";
import { ignoredProxyVariables } from "../target/proxy-env.ts";
import { checkCaller, reachTarget } from "../target/reached-target.ts";
import { hookUnreached, keyRefused, runProblem, targetUnavailable } from "../target/run-problems.ts";
import { hookSessionWarning, sessionOfRun } from "../target/run-session.ts";
import { secretHider } from "../target/secret-hider.ts";
import {
  ConformanceUsageError,
  DEFAULT_TIMEOUT_MS,
  parseTargetUrl,
  type routeTo,
  TargetUnreachableError,
  targetWarnings,
} from "../target/target.ts";
import type { TargetReach } from "../target/target-reach.ts";
import { createUndiciClient, UNDICI_UNREAD_ANSWER, undiciServes } from "../target/undici-client.ts";
import { type Driver, InFlight, listedOf, pacing } from "./driver.ts";
import { createOrderSupply, idsFromHook, type OrderIds, type OrderSupply, settledWithin } from "./orders.ts";
import type { PlayedHistory } from "./player.ts";
import { type SlotKind, slotPlan } from "./program.ts";
import { type SearchResult, type SearchSettings, search } from "./search.ts";
import { WatchedLists } from "./watched-list.ts";

export interface ExploreOptions extends TargetReach {
  /** The deployment's base address, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  /** Orders to work on (`--order-ids FILE`); a hook's are added to them. */
  orderIds?: OrderIds;
  /** A module path, "mock-control", or the hooks: beforeRun may return arrays of ids, provision makes more. */
  hooks?: string | ConformanceHooks;
  /** Clients at once (default 8). */
  clients?: number;
  /** Histories played at once, each on orders of its own (default 16). */
  parallel?: number;
  /** Steps of one client at most (default 6). */
  steps?: number;
  /** Longest pause before a step, in ms (default 5). */
  maxWaitMs?: number;
  /** Programs come from it; random (and printed) when absent. */
  seed?: number;
  /** How long the search runs (default 60 s). */
  budgetMs?: number;
  /** How long shrinking a finding may take (default 60 s). */
  shrinkBudgetMs?: number;
  /** Runs of each smaller candidate while shrinking, at least (default 5; more, up to 40, for a rare failure). */
  replays?: number;
  /** Runs of the minimal program at the end (default 10; on to 40 while none fails). */
  finalReplays?: number;
  /** Requests a second at most, across all clients (default: no cap). */
  maxRate?: number;
  /** Lists may be this stale (bounded staleness, read replicas); 0 by default: a stale read is a finding. */
  allowStaleMs?: number;
  /** How messages name `orderIds` (the command: --order-ids FILE). */
  orderIdsName?: string;
  /** Aborted to stop the run (a stop signal): it ends with what it covered, its reason the signal's name. */
  stop?: AbortSignal;
  /** How messages name `clients` and `budgetMs` (the command: --clients, --budget). */
  clientsName?: string;
  budgetName?: string;
}

export interface ExploreResult extends SearchResult {
  target: string;
  startedAt: string;
  durationMs: number;
  warnings: string[];
  clients: number;
  budgetMs: number;
  allowStaleMs: number;
  /** What each slot a program names held: the reproduction script fills them the same way. */
  slotKinds: readonly SlotKind[];
  /** The stop (a signal's name) that cut the run short, when one did. */
  interruptedBy?: string;
  /** The lists that said nothing of which orders exist, by reason, most first (`outcomeOf` reads them). */
  listsNotJudged: ListsNotJudged[];
  /** What the run could not look for (`outcomeOf` reads it: not a pass). */
  notChecked: string[];
}

export const EXPLORE_DEFAULTS = {
  clients: 8,
  // A history lasts as long as its longest client's pauses, during which the cores wait: enough histories
  // at once that the pauses of some overlap the requests of others against a local mock. Pauses short
  // beside a request's time, so that operations meet on an order (a pass counts how often they did).
  parallel: 16,
  steps: 6,
  maxWaitMs: 5,
  budgetMs: 60_000,
  shrinkBudgetMs: 60_000,
  replays: 5,
  finalReplays: 10,
};

const DEFAULT_MAX_RETRIES = 5;
const DEFAULT_MAX_RETRY_WAIT_MS = 30_000;

/**
 * Random concurrent programs of lists and cancels against the orders the run was given, each history
 * checked against the spec's model; a failing one is shrunk to a minimal program. Throws
 * ConformanceUsageError, TargetUnreachableError or HookError when the run itself is wrong.
 */
export async function explore(options: ExploreOptions): Promise<ExploreResult> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const names = options.settingNames ?? RUN_OPTION_NAMES;
  // Every wait counts against the budget, the start's too (a hook, a 429 waited out): the search gets
  // what is left, and a wait goes on at most a request's timeout past it.
  const ends = started + (options.budgetMs ?? EXPLORE_DEFAULTS.budgetMs);
  const prepared = await prepare(options, names, ends);
  const client = await openProbedClient(options, prepared);
  // The hooks' fetch shares the client's connections when it has them (undici's pool).
  if (client.fetch !== undefined) prepared.hookContext.fetch = client.fetch;
  if (client.controlTransport !== undefined)
    prepared.hookContext[CONTROL_TRANSPORT] = client.controlTransport;
  const inFlight = new InFlight(options.stop);
  try {
    const contract = options.contract ?? builtInContract();
    const driver: Driver = {
      client,
      apiKey: options.apiKey,
      lists: new WatchedLists({
        validateOrder: contract.schema("Order") as ValidateFunction,
        orderPlan: contract.flatPlan("Order"),
        readerLimits: options.readerLimits,
      }),
      pace: pacing(options.maxRate),
      unjudged: { cancelAnswers: new Map() },
      inFlight,
    };
    const supply = await supplyOf(options, prepared, driver);
    const settings = searchSettings(options, supply, ends);
    const grace = { ms: settings.hookGraceMs, name: "the run's request timeout" };
    const result = await search(driver, supply, settings).catch(async (error: unknown) => {
      await supply.settle(grace).catch(() => {});
      throw error;
    });
    const interrupted = result.ended === "interrupted" || result.finding?.shrinkEnded === "interrupted";
    const hookWarnings = await settleAfter(result, supply, grace, interrupted);
    if (result.coverage.orders === 0 && !interrupted)
      throw new ConformanceUsageError(nothingJudged(result, options, prepared));
    const unjudged =
      result.finding === undefined && !interrupted
        ? answersUnjudged(result, driver, prepared.names)
        : undefined;
    if (unjudged !== undefined) throw new ConformanceUsageError(secretHider(prepared.secrets)(unjudged));
    hideSecretsIn(result, prepared.secrets);
    return {
      ...result,
      target: prepared.baseUrl.href,
      startedAt,
      durationMs: Math.round(performance.now() - started),
      warnings: [...prepared.warnings, ...hookWarnings],
      clients: settings.shape.clients,
      budgetMs: options.budgetMs ?? EXPLORE_DEFAULTS.budgetMs,
      allowStaleMs: settings.allowStaleMs,
      slotKinds: settings.shape.slots.kinds,
      listsNotJudged: listsNotJudgedOf(driver, prepared.secrets),
      notChecked: interrupted ? [] : notCheckedOf(result, options),
      ...(interrupted ? { interruptedBy: String(options.stop?.reason ?? "a stop") } : {}),
    };
  } finally {
    inFlight.close();
    client.close();
  }
}

/**
 * Releases run behind the histories: the run is over when they are done, or `grace` after. A hook that
 * failed or did not return fails the run, unless it has a finding or was interrupted: the report is then
 * written all the same, the hook's problem among its warnings.
 */
async function settleAfter(
  result: SearchResult,
  supply: OrderSupply,
  grace: { ms: number; name: string },
  interrupted: boolean,
): Promise<string[]> {
  const problems = result.hookFailure !== undefined ? [result.hookFailure] : [];
  try {
    await supply.settle(grace);
  } catch (error) {
    if (!(error instanceof HookError) || (result.finding === undefined && !interrupted)) throw error;
    if (!problems.includes(error.message)) problems.push(error.message);
  }
  return problems;
}

interface Prepared {
  /** When the run's budget ends (a performance.now() instant). */
  ends: number;
  options: ExploreOptions;
  /** What the beforeRun hook returned. */
  provided: Awaited<ReturnType<NonNullable<ConformanceHooks["beforeRun"]>>> | undefined;
  /** The mock session the run is sent in: the one given, or the one the beforeRun hook made. */
  session: string | undefined;
  baseUrl: URL;
  route: ReturnType<typeof routeTo>;
  masked: ReturnType<typeof maskedHeaders>;
  hooks: ConformanceHooks;
  hookContext: HookContext;
  secrets: string[];
  warnings: string[];
  names: SettingNames;
}

async function prepare(options: ExploreOptions, names: SettingNames, ends: number): Promise<Prepared> {
  const baseUrl = parseTargetUrl(options.baseUrl, names);
  checkCaller(options, names);
  const { env, route, masked, hooks, hookContext, secrets } = await reachTarget(baseUrl, options, names);
  const provided = await beforeRunOf(hooks, hookContext, secrets, options, ends, (error) =>
    hookUnreached(error, baseUrl, names),
  );
  const session = sessionOfRun(options.session, provided, names);
  if (session !== undefined) hookContext.session = session;
  const warnings = [
    ...ignoredProxyVariables(env),
    ...targetWarnings(baseUrl, options.tls?.insecure, names, { role: "the base URL", who: "the run" }),
    ...(session !== options.session ? [hookSessionWarning(session, names)] : []),
  ];
  return {
    ends,
    options,
    provided,
    session,
    baseUrl,
    route,
    masked,
    hooks,
    hookContext,
    secrets,
    warnings,
    names,
  };
}

/**
 * Straight to a plain-HTTP target, undici's client: explore sends many small requests, and it reads each
 * answer for less than node:http does. Through a proxy or over TLS, the suite's client.
 */
function openClient(
  options: ExploreOptions,
  run: Prepared,
): Promise<HttpClient & { fetch?: typeof fetch; controlTransport?: ControlTransport }> {
  const settings = clientOptions(options, run);
  return undiciServes(run.baseUrl, settings)
    ? createUndiciClient(run.baseUrl, settings)
    : createHttpClient(run.baseUrl, settings);
}

function clientOptions(options: ExploreOptions, run: Prepared): ClientOptions {
  return {
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
    commonHeaders: {
      ...options.headers,
      ...(run.session !== undefined ? { "x-mock-session": run.session } : {}),
    },
    secretHeaders: run.masked.names,
    replaySecrets: new Map([
      [options.apiKey, API_KEY_VARIABLE],
      ...run.masked.entries.map(([name, value]): [string, string] => [value, headerVariable(name)]),
    ]),
    ...(options.tls ? { tls: options.tls } : {}),
    ...(run.route.proxy ? { proxy: run.route.proxy } : {}),
    retry: {
      max: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      maxWaitMs: options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS,
    },
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    names: run.names,
  };
}

/**
 * What the beforeRun hook provided, waited for no longer than the run's budget and a request's timeout, and
 * not past a stop: a hook that never returns ends the run (exit 2), never holds it forever.
 */
async function beforeRunOf(
  hooks: ConformanceHooks,
  context: HookContext,
  secrets: readonly string[],
  options: ExploreOptions,
  ends: number,
  diagnose: (error: unknown) => string | undefined,
): Promise<ProvidedIds | undefined> {
  if (hooks.beforeRun === undefined) return undefined;
  const call = runHook("beforeRun", () => hooks.beforeRun?.(context), secrets, diagnose);
  // Its failure after it was given up on is not the run's any more.
  call.catch(() => {});
  const budget = startBudgetText(options);
  if ((await settledWithin(call, waitEnds(options, ends), options.stop)) === "late")
    throw new HookError(
      options.stop?.aborted
        ? "the beforeRun hook had not returned when the run was stopped"
        : `the beforeRun hook did not return within ${budget}`,
    );
  return call;
}

/** The instant the beforeRun hook is given up: a request's timeout past the budget's end. */
function waitEnds(options: ExploreOptions, ends: number): number {
  return ends + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
}

function startBudgetText(options: ExploreOptions): string {
  const budgetMs = options.budgetMs ?? EXPLORE_DEFAULTS.budgetMs;
  return `the run's ${options.budgetName ?? "budgetMs"} and request timeout (${budgetMs + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS)} ms)`;
}

/**
 * How long past the budget an answer is still awaited: one under way is near its end (a list takes
 * milliseconds), while a 429's Retry-After may ask for years.
 */
function answerGraceMs(options: { timeoutMs?: number | undefined }): number {
  return Math.min(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, ANSWER_GRACE_MS);
}

const ANSWER_GRACE_MS = 1000;

/** The instant an answer of the run is given up on. */
function answersEnd(options: ExploreOptions, ends: number): number {
  return ends + answerGraceMs(options);
}

function answerBudgetText(options: ExploreOptions): string {
  const budgetMs = options.budgetMs ?? EXPLORE_DEFAULTS.budgetMs;
  return `the run's ${options.budgetName ?? "budgetMs"} (${budgetMs} ms) and ${answerGraceMs(options)} ms of grace`;
}

/**
 * One list before anything else: a target that cannot be reached, is not serving (502, 503, 504) or refuses
 * the key stops the run (exit 2).
 */
async function probe(client: HttpClient, apiKey: string, run: Prepared): Promise<Exchange> {
  const exchange = await firstAnswer(client, apiKey, run);
  const problem =
    runProblem(exchange, run.baseUrl, run.route, run.names) ??
    targetUnavailable(exchange, run.baseUrl) ??
    keyRefused(exchange, run.baseUrl, run.names) ??
    listNotFound(exchange, run) ??
    firstListTooLarge(exchange, run);
  if (problem) throw new TargetUnreachableError(problem, run.secrets);
  return exchange;
}

/**
 * The first list's answer, waited for (its 429s retried) no longer than the budget allows: a target that
 * asks to be retried in a year ends the run (exit 2) instead of holding it.
 */
async function firstAnswer(client: HttpClient, apiKey: string, run: Prepared): Promise<Exchange> {
  const sending = client.send("GET", "/store/orders", { authorization: `Bearer ${apiKey}` });
  sending.catch(() => {});
  if ((await settledWithin(sending, answersEnd(run.options, run.ends), run.options.stop)) === "settled")
    return sending;
  throw new TargetUnreachableError(
    run.options.stop?.aborted
      ? "the first list had no answer when the run was stopped; nothing was judged"
      : `the first list (GET ${new URL("store/orders", `${run.baseUrl.href}/`).href}) had no answer within ${answerBudgetText(run.options)}, its 429s waited out included: nothing was judged; give a longer ${run.options.budgetName ?? "budgetMs"}, or a lower ${run.names.maxRetryWait}`,
    run.secrets,
  );
}

/**
 * The run's client once it has read a first list. A target whose answers undici will not read (a 100
 * Continue before each, which HTTP lets a server send and node:http skips) is explored with node:http's.
 */
async function openProbedClient(
  options: ExploreOptions,
  run: Prepared,
): Promise<HttpClient & { fetch?: typeof fetch; controlTransport?: ControlTransport }> {
  const first = await openClient(options, run);
  const tried = await probe(first, options.apiKey, run).catch((error: unknown) => error);
  if (!(tried instanceof Error)) return first;
  first.close();
  if (!(tried instanceof TargetUnreachableError) || !tried.message.includes(UNDICI_UNREAD_ANSWER))
    throw tried;
  const client = await createHttpClient(run.baseUrl, clientOptions(options, run));
  try {
    await probe(client, options.apiKey, run);
    return client;
  } catch (error) {
    client.close();
    throw error;
  }
}

/**
 * A first list `--max-body` cut: every list after it would be cut the same and judge nothing, so the run
 * ends at once (exit 2) rather than spend its budget on them.
 */
function firstListTooLarge(exchange: Exchange, run: Prepared): string | undefined {
  if (exchange.limit !== "max-body" || exchange.response?.status !== 200) return undefined;
  const why = exchange.response.cut ?? exchange.error ?? "the body is larger than --max-body allows";
  return `the first list (GET ${new URL(exchange.request.path, run.baseUrl).href}) was not read whole: ${why}; every list would be cut the same, so nothing was judged`;
}

/** The list is at every deployment's base: a 404 for it says the address is wrong (no /v1), not the target. */
function listNotFound(exchange: Exchange, run: Prepared): string | undefined {
  if (exchange.response?.status !== 404) return undefined;
  return `GET ${new URL(exchange.request.path, run.baseUrl).href} was answered 404: is ${run.names.target} right? It is the address the API's paths follow, usually ending in /v1; nothing was judged`;
}

async function supplyOf(options: ExploreOptions, run: Prepared, driver: Driver): Promise<OrderSupply> {
  const fromHook = idsFromHook(run.provided ?? undefined);
  const given = options.orderIds;
  const ids: OrderIds = {
    pending: [...(given?.pending ?? []), ...fromHook.pending],
    shipped: [...(given?.shipped ?? []), ...fromHook.shipped],
    missing: [...(given?.missing ?? []), ...fromHook.missing],
  };
  const file = options.orderIdsName ?? "orderIds";
  const provides = run.hooks.provision !== undefined;
  if (ids.pending.length === 0 && !provides) {
    throw new ConformanceUsageError(
      `explore has no pending order to cancel: give some in ${file} ({"pending": ["…"]}), or ${run.names.hooks} a module whose beforeRun returns { pending: [...] } or that exports provision() (mock-control does, against this project's mock)`,
    );
  }
  const pending = await listedPending(driver, ids.pending, options, run);
  if (pending.length === 0 && ids.pending.length > 0 && !provides)
    throw new ConformanceUsageError(
      `none of the ${ids.pending.length} orders given as pending is in the list (cancelled or removed already, or of another deployment): give fresh ones in ${sourceOf(ids.pending, options)}`,
    );
  return createOrderSupply({ ...ids, pending }, run.hooks, run.hookContext, run.secrets);
}

// Tries at the first list when it cannot be read whole (a 5xx, an answer cut short): a list the run never
// reads says nothing of whether the orders given exist.
const GIVEN_CHECK_TRIES = 3;

/**
 * The orders given as pending that the run's first list shows: one it does not was never an order of the
 * deployment, or was cancelled and removed already, and its 404 or 409 would be blamed on the target. They
 * are skipped, with a warning that counts them. When no list can be read whole, the check cannot be made:
 * none of them is used, and without a provision hook the run ends (exit 2) rather than blame the target
 * for a stale file.
 */
async function listedPending(
  driver: Driver,
  pending: readonly string[],
  options: ExploreOptions,
  run: Prepared,
): Promise<readonly string[]> {
  if (pending.length === 0) return pending;
  let listed: Set<string> | string = "not read";
  let tries = 0;
  const callOff = driver.inFlight.giveUpAfter(answersEnd(options, run.ends) - performance.now());
  while (typeof listed === "string" && tries < GIVEN_CHECK_TRIES) {
    if (options.stop?.aborted || performance.now() >= run.ends) break;
    tries++;
    listed = await listedOf(driver, pending);
  }
  callOff();
  const triedText = `${tries === 0 ? "no" : tries} ${tries === 1 ? "try" : "tries"}${tries < GIVEN_CHECK_TRIES ? ` before ${answerBudgetText(options)} ran out` : ""}`;
  if (typeof listed === "string" && run.hooks.provision !== undefined) {
    run.warnings.push(
      `the ${pending.length} orders given as pending could not be checked against the list, which was not read whole in ${triedText} (the last: ${listed}), so only the provision hook's orders were used`,
    );
    return [];
  }
  if (typeof listed === "string")
    throw new ConformanceUsageError(
      `the orders given as pending could not be checked against the list, which was not read whole in ${triedText} (the last: ${listed}): an order that is not there would be blamed on the target; nothing was judged`,
    );
  const shows = listed;
  if (shows.size === pending.length) return pending;
  const absent = [...new Set(pending.filter((id) => !shows.has(id)))];
  if (absent.length === 0) return pending;
  const shown =
    absent.slice(0, 10).join(", ") + (absent.length > 10 ? ` and ${absent.length - 10} more` : "");
  run.warnings.push(
    `${absent.length} of the orders given as pending are not in the list (cancelled or removed already, or of another deployment), so they were skipped: ${shown}; check ${sourceOf(absent, options)}`,
  );
  return pending.filter((id) => shows.has(id));
}

/** Where ids given as pending came from: the file (or option) when any of them is its own, else the hook. */
function sourceOf(ids: readonly string[], options: ExploreOptions): string {
  const fromFile = new Set(options.orderIds?.pending ?? []);
  return ids.some((id) => fromFile.has(id))
    ? (options.orderIdsName ?? "orderIds")
    : "the beforeRun hook's pending ids";
}

function searchSettings(options: ExploreOptions, supply: OrderSupply, ends: number): SearchSettings {
  return {
    seed: options.seed ?? randomInt(2 ** 31),
    shape: {
      clients: options.clients ?? EXPLORE_DEFAULTS.clients,
      steps: options.steps ?? EXPLORE_DEFAULTS.steps,
      maxWaitMs: options.maxWaitMs ?? EXPLORE_DEFAULTS.maxWaitMs,
      slots: slotPlan(supply.hasShipped, supply.missing.length > 0, supply.pendingLimit),
    },
    budgetMs: Math.max(0, ends - performance.now()),
    shrinkBudgetMs: options.shrinkBudgetMs ?? EXPLORE_DEFAULTS.shrinkBudgetMs,
    replays: options.replays ?? EXPLORE_DEFAULTS.replays,
    finalReplays: options.finalReplays ?? EXPLORE_DEFAULTS.finalReplays,
    allowStaleMs: options.allowStaleMs ?? 0,
    parallel: options.parallel ?? EXPLORE_DEFAULTS.parallel,
    stop: options.stop,
    hookGraceMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    answerGraceMs: answerGraceMs(options),
  };
}

/**
 * A run that judged no history on any of its orders (lists alone judge none) says nothing of the target:
 * what to change so that it does.
 */
function nothingJudged(result: SearchResult, options: ExploreOptions, run: Prepared): string {
  const file = options.orderIdsName ?? "orderIds";
  if (result.ended === "budget")
    return `explore judged no history: the budget ended before the first; give a longer ${options.budgetName ?? "budgetMs"}`;
  return `explore judged no history: its orders ran out before the first program could be played; give more pending orders in ${file} or ${run.names.hooks} a module that exports provision(), or fewer ${options.clientsName ?? "clients"}`;
}

/**
 * Why a run that found nothing judged nothing all the same: the key refused after it was accepted, no list
 * read whole (nothing said which orders exist), or no cancel answered as the model decides by. A pass
 * over answers that say nothing would be a gate that passes silently.
 */
function answersUnjudged(result: SearchResult, driver: Driver, names: SettingNames): string | undefined {
  const c = result.coverage;
  const sent = c.lists + c.cancels;
  if (c.keyRefused > 0)
    return `the target refused the run's API key (401) in ${c.keyRefused} of ${sent} requests after accepting it at the start: a deployment that refuses the key it accepted cannot be judged; check ${names.apiKey}, and that nothing revokes it or limits it by answering 401`;
  if (c.lists > 0 && c.listsReadWhole === 0)
    return `explore judged nothing: none of its ${c.lists} lists was read whole (the first: ${driver.unjudged.firstUnreadList ?? "not read whole"}), so none said which orders exist; the suite (petstore-conformance) run against the target says what is wrong with the list`;
  if (c.cancels > 0 && c.cancelsDecided === 0) {
    const answers = [...driver.unjudged.cancelAnswers]
      .map(([status, count]) => `${status} ×${count}`)
      .join(", ");
    return `explore judged nothing: none of its ${c.cancels} cancels got an answer the model decides by (204, 404 or 409; got ${answers}); the suite (petstore-conformance) run against the target says what is wrong with the cancel`;
  }
  return undefined;
}

/**
 * A race shows only where operations on one order overlap: a run in which none did (one client, a slow
 * link, `--max-rate`) could not have found one, and a pass would say more than it looked at.
 */
function notCheckedOf(result: SearchResult, options: ExploreOptions): string[] {
  if (result.finding !== undefined || result.coverage.concurrentPairs > 0) return [];
  return [
    `no two operations on one order overlapped in time, so no race could be found: give more ${options.clientsName ?? "clients"} (at least 2), a longer ${options.budgetName ?? "budgetMs"}, or a higher rate`,
  ];
}

/** By reason, most first; an example's body comes from the target, which may echo a secret. */
function listsNotJudgedOf(driver: Driver, secrets: readonly string[]): ListsNotJudged[] {
  const hide = secretHider(secrets);
  return [...(driver.unjudged.unreadLists?.values() ?? [])]
    .sort((a, b) => b.count - a.count)
    .map((lists) => ({ ...lists, example: hide(lists.example) }));
}

/** Records come from the target, which may echo the key or a masked header: never in a report. */
function hideSecretsIn(result: SearchResult, secrets: readonly string[]): void {
  const hide = secretHider(secrets);
  const clean = (played: PlayedHistory) => {
    (played.history as { records: readonly string[] }).records = played.history.records.map(hide);
  };
  if (result.finding) {
    clean(result.finding.original);
    clean(result.finding.minimal);
  }
}
