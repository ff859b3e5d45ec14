import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { allowedHosts, isLoopback } from "../../common/allowed-hosts.ts";
import { capConnections, defaultMaxConnections } from "../../common/connection-cap.ts";
import { builtInContract } from "../../contract/built-in.ts";
import type { Contract } from "../../contract/contract.ts";
import { createVersionedRouter, type Operation, pathOf, readOperations } from "../../contract/operations.ts";
import { JudgeTurns } from "../judging/judge-turns.ts";
import { InThreadJudges, type ListJudges } from "../judging/list-feed.ts";
import { ListJudge, type ReaderLimits } from "../judging/list-judge.ts";
import { type MemoryBudget, proxyAccount } from "../judging/memory-budget.ts";
import { operationOfKind } from "../judging/operation-traits.ts";
import { PROXY_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import { WorkerJudges } from "../judging/worker-judges.ts";
import type { Report } from "../reports/report.ts";
import { unwritableReportFile } from "../reports/report-files.ts";
import {
  createAgent,
  createHttpClient,
  DEFAULT_DEADLINE_MS,
  DEFAULT_MAX_BODY_BYTES,
  hostnameOf,
  requestTls,
  type TlsOptions,
} from "../target/http-client.ts";
import { ignoredProxyVariables, type ProxyChoice } from "../target/proxy-env.ts";
import { runProblem } from "../target/run-problems.ts";
import {
  ConformanceUsageError,
  DEFAULT_TIMEOUT_MS,
  parseTargetUrl,
  routeTo,
  TargetUnreachableError,
  targetWarnings,
} from "../target/target.ts";
import { CancelsInFlight } from "./cancels-in-flight.ts";
import { DEFAULT_PROXY_PORT, DEFAULT_REQUEST_TIMEOUT_MS, PROXY_BASE_PATH } from "./defaults.ts";
import type { ExchangeOutcome, ForwardProxy, HeldReply } from "./exchange-lifecycle.ts";
import { createReader } from "./expectation.ts";
import { Forwarder } from "./forward-exchange.ts";
import { harEntryOf } from "./har-entry.ts";
import { HarWriter } from "./har-writer.ts";
import {
  type ForwardedExchange,
  type JudgeContext,
  type JudgedExchange,
  judgeExchange,
  violates,
} from "./judged-exchange.ts";
import { TrafficLedger } from "./ledger.ts";
import { sendError } from "./own-answer.ts";
import { observed } from "./proxy-options.ts";
import { type CheckedRequest, checkRequest, type EdgeSettings } from "./request-edge.ts";
import { NotOrdersPathError, NotOrdersPaths } from "./state-rules/not-orders-paths.ts";
import { RECORDS_KEPT_UP_TO, type StateLimits, TrafficState } from "./state-rules.ts";
import { hideInJudged, TrafficSecrets } from "./traffic-secrets.ts";

export interface ProxyOptions {
  /** The deployment's base address, ending in /v1: requests under the proxy's /v1 go under it. */
  upstream: string;
  /** Default 4020; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the proxy is for this machine's browsers and tests. */
  host?: string;
  /** Only the spec's documented statuses, even for input the spec has no case for (as the suite's --strict). */
  strict?: boolean;
  /** Answer an exchange that breaks the contract or a state rule with a 502 naming the violation. */
  errors?: boolean;
  /** Write the exchanges to this file as HAR 1.2, as they happen, credentials hidden. */
  har?: string;
  /** Headers added to every request to the upstream (a gateway's); masked in reports unless in showHeaders. */
  headers?: Readonly<Record<string, string>>;
  showHeaders?: readonly string[];
  tls?: TlsOptions;
  /** A proxy URL to reach the upstream through, over the proxy environment variables. */
  proxy?: string;
  /**
   * Client connections kept open at once (default 2/5 of the file descriptors left); past it a new one
   * closes the oldest idle one, or is closed itself when every one is busy.
   */
  maxConnections?: number;
  /**
   * How long a client may take to send a whole request, head and body (default 30 s): past it the proxy
   * answers 408 when it can, and closes the connection, so a body that never ends holds no place for long.
   */
  requestTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** How long the upstream may take to answer each request (default 10000 ms). */
  timeoutMs?: number;
  contract?: Contract;
  /** What the state rules remember at most; the oldest is forgotten first. */
  limits?: Partial<StateLimits>;
  /** Decoded bytes of one body judged at most (default 2 GiB); a larger one passes through, not judged. */
  maxBodyBytes?: number;
  /** Bounds of the judge's JSON reader (--max-depth, --max-string, --max-number); defaults when absent. */
  readerLimits?: ReaderLimits;
  /**
   * Judge large lists on a worker thread beside the forwarding (default: true with the built-in contract).
   * False judges them on the proxy's own thread, in short turns between exchanges.
   */
  judgeOnWorker?: boolean;
  /** How messages name the settings (default: these options' names); the command gives its flags. */
  settingNames?: SettingNames;
  /** Host names the proxy answers beyond loopback and its own address (--allowed-host). */
  allowedHosts?: string[];
  /**
   * Page origins that may use, through the proxy, what its `headers` credentials unlock (--cors-origin).
   * With such credentials a request of a page of any other site is refused with 403 at the edge.
   */
  corsOrigins?: string[];
  /** For a whole exchange, the answer's last byte included (default 120 s). */
  deadlineMs?: number;
  /**
   * What the traffic may make the proxy hold at once (--max-memory, default 256 MiB): body starts kept for
   * the checks, lists waiting for their judge and the ids of those being judged, answers held by --errors,
   * and the lists the state rules keep. Past it kept lists go first, then each exchange holds less.
   */
  maxHeldBytes?: number;
  /** Header or query parameter names whose values are credentials, beyond the usual ones (--secret). */
  secretNames?: string[];
  /**
   * Path prefixes whose writes never touch orders (--not-orders): another API's, sharing the proxy. Its
   * writes are then no barrier to the state rules. One that covers a path of the contract is refused.
   */
  notOrders?: readonly string[];
  /** Sees each exchange with its verdict, once it is complete. */
  onExchange?: (judged: JudgedExchange) => void;
  /** Told once of each problem that degrades the run as it goes (a HAR that can no longer be written). */
  onProblem?: (problem: string) => void;
}

export interface RunningProxy {
  /** The proxy's base address, ending in /v1: point the app or the tests here. */
  url: string;
  upstream: string;
  /** Checks failed so far, state findings included. */
  readonly failed: number;
  /** What the proxy warns of from the start (also in the report): for its first lines. */
  readonly startWarnings: readonly string[];
  /** The report over the traffic so far. */
  report(): Report;
  /** The HAR so far under its name, and the report over the traffic so far: for a periodic write. */
  checkpoint(): Promise<Report>;
  /** A fault of the proxy's own that reached no exchange's supervisor: counted and said in the report. */
  fault(where: string, error: unknown): void;
  /**
   * Stops taking requests, lets those in flight finish for up to `graceMs` (default 5 s), cuts off the rest
   * (reported as such), and returns the report over all the traffic.
   */
  close(options?: { graceMs?: number }): Promise<Report>;
}

// Half the stop's own grace (STOP_GRACE_MS): what is in flight gets time to end, and the reports to be written.
const CLOSE_GRACE_MS = 5000;
// Each later step of a stop: with the drain, well within STOP_GRACE_MS.
const STEP_GRACE_MS = 1500;
const CUT_AT_STOP = "cut off: still in flight when the proxy stopped";

/**
 * A reverse proxy on loopback: every request goes to the upstream as it came (the Host set to the
 * upstream's), every answer back as it came, and each exchange under /v1 is judged by the suite's own
 * checks and the spec's state rules, with the suite's reporters over the whole traffic at the end.
 */
export async function runProxy(options: ProxyOptions): Promise<RunningProxy> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const upstream = parseTargetUrl(options.upstream, namesOf(options));
  const env = options.env ?? process.env;
  const route = routeTo(upstream, env, options.proxy, namesOf(options));
  const host = options.host ?? "127.0.0.1";
  const warnings = [...ignoredProxyVariables(env), ...startWarnings(upstream, host, options)];
  const secrets = new TrafficSecrets(options, route);

  const contract = options.contract ?? builtInContract();
  const operations = readOperations(contract);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const notOrders = notOrdersOf(options, operations);
  await probe(upstream, route, options, timeoutMs, operations, secrets.configured);

  // One account of what the traffic makes the proxy hold: answers and list backlogs in flight, the ids of
  // lists being judged, and the lists the state rules keep.
  // --max-memory is the process's growth: what the forwarding leaves to the collector comes off the top.
  const held = proxyAccount(options.maxHeldBytes);
  const state = new TrafficState(options.limits, held);
  const ledger = new TrafficLedger(operations, namesOf(options));
  const validators = liveValidators(contract, namesOf(options), options.readerLimits);
  // Counted by the forwarder's exchanges, read by the judging: neither calls the other.
  const cancels = new CancelsInFlight(notOrders);
  const read = createReader(operations, options.strict ?? false);
  const judgeContext = judgeContextOf(read, validators, state, cancels);
  const { agent, via, send } = await upstreamAgent(upstream, route, options);
  const har = harWriter(options, ledger);
  const inFlight = new InFlight();
  const turns = new JudgeTurns();
  const judges = listJudges(options, validators, turns, held);
  const finisher = new Finisher(secrets, judgeContext, ledger, har, options.onExchange);
  const forwarder = new Forwarder(
    {
      ...forwarding(upstream, options, timeoutMs, secrets, har !== undefined, warnings, started),
      route: createVersionedRouter(operations),
      agent,
      send,
      ...(via ? { via } : {}),
      held,
      judges,
      turns,
      cancels,
    },
    (outcome) => inFlight.ended(() => finisher.finish(outcome)),
  );
  const server = proxyServer(
    edgeOf(options, upstream, host),
    (request, response, checked) => {
      let seq = 0;
      inFlight.began(response, () => `#${seq} ${request.method} ${secrets.hide(request.url ?? "")}`);
      seq = forwarder.forward(request, response, checked);
    },
    (where, error) => ledger.fault(where, error, secrets.hide),
  );
  const port = await listen(server, options, host);
  const address = host.includes(":") ? `[${host}]` : host;

  const report = () =>
    ledger.report({
      target: observed(upstream.href),
      startedAt,
      durationMs: msSince(started),
      warnings,
      state,
      secrets: secrets.configured,
    });
  let closing: Promise<Report> | undefined;
  const attempt = (where: string, run: () => void) => ledger.attempt(where, run, secrets.hide);
  return {
    url: `http://${address}:${port}${PROXY_BASE_PATH}`,
    upstream: upstream.href,
    get failed() {
      return ledger.failed;
    },
    startWarnings: [...warnings],
    report,
    fault(where, error) {
      ledger.fault(where, error, secrets.hide);
    },
    async checkpoint() {
      await har?.flush();
      return report();
    },
    close({ graceMs = CLOSE_GRACE_MS } = {}) {
      closing ??= (async () => {
        const stopped = new Promise((resolve) => server.close(resolve));
        server.closeIdleConnections();
        await inFlight.drained(graceMs);
        // Each exchange still in flight is in the report, as cut off by the stop, not left out of it; what
        // came of its answer is judged first, while the connections close.
        let passing: string[] = [];
        attempt("stop", () => {
          passing = inFlight.cutting(() => forwarder.cutInFlight(CUT_AT_STOP));
        });
        if (passing.length > 0) warnings.push(passingCutWarning(passing));
        const cutJudged = inFlight.drained(STEP_GRACE_MS);
        server.closeAllConnections();
        // Every step of a stop is bounded, and together within the stop's own grace: whatever hangs or
        // fails, the report over the traffic comes back.
        await settled(stopped, STEP_GRACE_MS, (why) => ledger.fault("stop", why ?? "connections still open"));
        await cutJudged;
        attempt("stop", () => forwarder.endCut(CUT_AT_STOP));
        attempt("stop", () => forwarder.stop());
        await settled(judges.close(), STEP_GRACE_MS, (why) =>
          ledger.fault("stop", why ?? "the list judges did not finish in time"),
        );
        attempt("stop", () => agent.destroy());
        await har?.close().catch((error: unknown) => ledger.fault("HAR", error, secrets.hide));
        return report();
      })();
      return closing;
    },
  };
}

/** A problem that degrades the run as it goes: among the report's warnings, and told to the caller. */
function problemTeller(warnings: string[], options: ProxyOptions): (problem: string) => void {
  return (problem) => {
    warnings.push(problem);
    options.onProblem?.(problem);
  };
}

/** What the judging reads beside each exchange. */
function judgeContextOf(
  read: JudgeContext["read"],
  validators: JudgeContext["validators"],
  state: TrafficState,
  cancels: CancelsInFlight,
): JudgeContext {
  return {
    read,
    validators,
    state,
    passed: new Map(),
    cancelInFlight: (orderId, instant) => cancels.sentBefore(orderId, instant),
    notOrders: cancels.notOrders,
  };
}

/**
 * The --not-orders prefixes, read at start before the upstream is asked anything: a value the option
 * cannot take is a usage error.
 */
function notOrdersOf(options: ProxyOptions, operations: ReadonlyMap<string, Operation>): NotOrdersPaths {
  try {
    return new NotOrdersPaths(options.notOrders ?? [], operations, namesOf(options).notOrders);
  } catch (error) {
    if (error instanceof NotOrdersPathError) throw new ConformanceUsageError(error.message);
    throw error;
  }
}

/** What the proxy's edge checks each request against. */
function edgeOf(options: ProxyOptions, upstream: URL, host: string): EdgeSettings {
  return {
    hosts: allowedHosts(host, options.allowedHosts),
    upstream,
    ...(lendsCredentials(options) ? { credentialOrigins: new Set(options.corsOrigins ?? []) } : {}),
    names: namesOf(options),
  };
}

/**
 * The HAR, when asked for: a path that cannot be written is refused before the proxy listens (its missing
 * folders made), not found at the end; a write that fails later is a fault in the report and a problem said once.
 */
function harWriter(options: ProxyOptions, ledger: TrafficLedger): HarWriter | undefined {
  if (options.har === undefined) return undefined;
  const unwritable = unwritableReportFile([options.har], "whole");
  if (unwritable !== undefined) throw new ConformanceUsageError(`the HAR: ${unwritable.message}`);
  return new HarWriter(options.har, { name: "petstore-conformance proxy", version: "1" }, (problem) => {
    ledger.fault("HAR", problem);
    options.onProblem?.(problem);
  });
}

/**
 * The proxy's server: each request's head checked at the edge (a Host the proxy answers to, so that a page's
 * name reaching it by DNS rebinding is refused; a target naming the upstream; a page allowed to use its
 * credentials) before anything is spent on it, then handed to the forwarder, which supervises it.
 */
function proxyServer(
  edge: EdgeSettings,
  forward: (request: IncomingMessage, response: ServerResponse, checked: CheckedRequest) => void,
  fault: (where: string, error: unknown) => void,
): http.Server {
  return http.createServer((request, response) => {
    try {
      const verdict = checkRequest(request, edge);
      if (!verdict.ok) {
        request.resume();
        sendError(response, verdict.status, { code: verdict.code, message: verdict.message });
        return;
      }
      forward(request, response, verdict.request);
    } catch (error) {
      // The last line, for a fault before the forwarder's supervisor took the exchange.
      fault(`${request.method} request`, error);
      if (!response.headersSent)
        sendError(response, 502, { code: "proxy_fault", message: "the proxy failed" });
      else response.destroy();
    }
  });
}

/**
 * What becomes of each exchange once forwarded: judged, what it echoes of a secret hidden, replaced with a
 * 502 under --errors when it breaks a rule, counted in the ledger and written to the HAR. Each step on its
 * own: one that throws is a fault in the report, and the steps after it still run.
 */
class Finisher {
  /** The last exchange's own credentials and their hider: a client sends the same ones again and again. */
  #last: { own: readonly string[]; hide: (text: string) => string } | undefined;

  constructor(
    readonly secrets: TrafficSecrets,
    readonly context: JudgeContext,
    readonly ledger: TrafficLedger,
    readonly har: HarWriter | undefined,
    readonly onExchange: ProxyOptions["onExchange"],
  ) {}

  finish({ forwarded, har: source, answer }: ExchangeOutcome): void {
    // What a server echoes back (a key in a message) is hidden before anyone sees the verdict: the
    // configured secrets and the credentials this exchange carried.
    const hide = this.#hiderFor(forwarded.secrets);
    const step = (part: string, run: () => void) =>
      this.ledger.attempt(`#${forwarded.seq} ${forwarded.method}: ${part}`, run, hide);
    let judged: JudgedExchange | undefined;
    step("judging", () => {
      judged = judgeSafely(forwarded, this.context);
      hideInJudged(judged, hide);
    });
    const verdict = judged;
    if (answer) step("answer", () => answerHeld(answer, verdict, hide));
    if (verdict === undefined) return;
    step("ledger", () => this.ledger.record(verdict, hide));
    const { har, onExchange } = this;
    if (har && source) step("HAR", () => har.add(harEntryOf(source, this.secrets.names, hide)));
    if (onExchange) step("live line", () => onExchange(verdict));
  }

  /**
   * The exchange's hider. One that cannot be made hides the exchange's texts whole: a report that says less
   * is better than one that shows a credential.
   */
  #hiderFor(own: readonly string[]): (text: string) => string {
    if (this.#last !== undefined && sameStrings(own, this.#last.own)) return this.#last.hide;
    try {
      this.#last = { own, hide: this.secrets.forExchange(own) };
      return this.#last.hide;
    } catch {
      return () => "*** (hidden whole: the proxy could not prepare its secret hider for this exchange)";
    }
  }
}

function sameStrings(one: readonly string[], other: readonly string[]): boolean {
  if (one.length !== other.length) return false;
  for (let at = 0; at < one.length; at++) if (one[at] !== other[at]) return false;
  return true;
}

/** A held answer passed on when it keeps the rules, replaced when it breaks one or could not be judged. */
function answerHeld(
  answer: HeldReply,
  verdict: JudgedExchange | undefined,
  hide: (text: string) => string,
): void {
  try {
    if (verdict === undefined) {
      // Not judged: a held answer is never passed on unjudged (--errors fails closed).
      answer.replace(502, { code: "proxy_fault", message: "the proxy could not judge this answer" });
    } else if (violates(verdict)) {
      verdict.replaced = true;
      answer.replace(502, { code: "contract_violation", message: hide(violationMessage(verdict)) });
    } else answer.pass();
  } catch (error) {
    answer.fail();
    throw error;
  }
}

/** Waits for `promise` up to `ms`; past that, or when it fails, `late` says so and the wait ends. */
async function settled(promise: Promise<unknown>, ms: number, late: (why?: string) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  const outcome = await Promise.race([
    promise.then(
      () => "done",
      (error: unknown) => `failed: ${error instanceof Error ? error.message : String(error)}`,
    ),
    timedOut,
  ]);
  clearTimeout(timer);
  if (outcome === "late") late();
  else if (outcome !== "done") late(outcome);
}

/** How exchanges are forwarded, from the options: where, how long, what is added, held and hidden. */
/** Ms since `started`, rounded up: no instant a finding shows (to a tenth of a ms) reads later. */
function msSince(started: number): number {
  return Math.ceil(performance.now() - started);
}

function forwarding(
  upstream: URL,
  options: ProxyOptions,
  timeoutMs: number,
  secrets: TrafficSecrets,
  keepForHar: boolean,
  warnings: string[],
  /** When the proxy started: exchanges' instants are ms from it. */
  clockStart: number,
) {
  return {
    upstream,
    clockStart,
    tls: requestTls(upstream, options.tls),
    timeoutMs,
    deadlineMs: options.deadlineMs ?? DEFAULT_DEADLINE_MS,
    added: Object.entries(options.headers ?? {}),
    holdAnswers: options.errors ?? false,
    keepForHar,
    hide: secrets.hide,
    secretNames: secrets.names,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    names: namesOf(options),
    // A held answer that cannot be set aside in a file goes on before its verdict: said once, here too.
    onProblem: problemTeller(warnings, options),
  };
}

/**
 * Where large lists are judged: on a worker thread, beside the forwarding, when the contract is the built-in
 * one (the thread builds its own validators from it); on this thread, in short turns, for a contract given
 * as an object, which cannot cross to another thread, or when `judgeOnWorker` is false.
 */
function listJudges(
  options: ProxyOptions,
  validators: ReturnType<typeof liveValidators>,
  turns: JudgeTurns,
  held: MemoryBudget,
): ListJudges {
  if (options.contract === undefined && options.judgeOnWorker !== false)
    return new WorkerJudges({
      keepRecordsUpTo: validators.keepRecordsUpTo,
      account: { shared: held.shared, limit: held.limit },
      ...(options.readerLimits ? { readerLimits: options.readerLimits } : {}),
    });
  return new InThreadJudges(
    () =>
      new ListJudge({
        validateOrder: validators.orderRecord,
        orderPlan: validators.orderPlan,
        keepRecordsUpTo: validators.keepRecordsUpTo,
        ...options.readerLimits,
        memory: held,
      }),
    turns,
  );
}

function liveValidators(contract: Contract, names: SettingNames, readerLimits: ReaderLimits | undefined) {
  return {
    names,
    // The same bounds for a list kept whole as for one judged as it streams.
    ...(readerLimits ? { readerLimits } : {}),
    errorRecord: contract.schema("Error"),
    orderRecord: contract.schema("Order"),
    orderPlan: contract.flatPlan("Order"),
    // Lists up to this size keep every record, for the state rules that compare them.
    keepRecordsUpTo: RECORDS_KEPT_UP_TO,
  };
}

function lendsCredentials(options: ProxyOptions): boolean {
  return Object.keys(options.headers ?? {}).length > 0;
}

function startWarnings(upstream: URL, host: string, options: ProxyOptions): string[] {
  const names = namesOf(options);
  const warnings = targetWarnings(upstream, options.tls?.insecure, names, {
    role: "the upstream",
    who: "the proxy",
  });
  if (lendsCredentials(options) && !isLoopback(host))
    warnings.push(
      `the proxy listens on ${host}, beyond this machine, and adds ${names.headers} credentials to every request: whoever reaches it uses them`,
    );
  return warnings;
}

/**
 * Exchanges forwarded but not yet judged, and answers not yet wholly passed on to their clients (a held
 * answer read back to a slow client after its verdict): close() waits for both, up to its grace.
 */
class InFlight {
  #open = 0;
  /** Each client's answer still open, with how the stop names it. */
  readonly #answers = new Map<ServerResponse, () => string>();
  #drained: (() => void) | undefined;

  began(response: ServerResponse, name: () => string): void {
    this.#open++;
    this.#answers.set(response, name);
    response.once("close", () => {
      this.#answers.delete(response);
      this.#check();
    });
  }

  ended(finish: () => void): void {
    try {
      finish();
    } finally {
      this.#open--;
      this.#check();
    }
  }

  get #idle(): boolean {
    return this.#open === 0 && this.#answers.size === 0;
  }

  #check(): void {
    if (this.#idle) this.#drained?.();
  }

  async drained(graceMs: number): Promise<void> {
    if (this.#idle) return;
    await Promise.race([
      new Promise<void>((resolve) => {
        this.#drained = resolve;
      }),
      new Promise((resolve) => setTimeout(resolve, graceMs).unref()),
    ]);
  }

  /**
   * Runs the stop's cut of the exchanges not judged yet, and names the answers it left open: judged
   * already, they were still being passed on, and closing the connections cuts them.
   */
  cutting(cut: () => void): string[] {
    const before = new Map<ServerResponse, boolean>();
    for (const response of this.#answers.keys())
      before.set(response, response.destroyed || response.writableEnded);
    cut();
    const passing: string[] = [];
    for (const [response, ended] of before) {
      const stillOpen = this.#answers.has(response) && !response.writableFinished;
      // One the cut ended or destroyed was not judged: the report has it as cut off.
      const cutNow = !ended && (response.destroyed || response.writableEnded);
      if (stillOpen && !cutNow) passing.push(this.#answers.get(response)?.() ?? "");
    }
    return passing;
  }
}

/** The warning for answers judged whole and cut at the stop while still being passed on to their clients. */
function passingCutWarning(names: string[]): string {
  const shown = names.slice(0, 3).join("; ");
  const more = names.length > 3 ? `; and ${names.length - 3} more` : "";
  const answers = names.length === 1 ? "1 answer was" : `${names.length} answers were`;
  return `${answers} cut at the stop while still being passed on to the client after the stop's grace (judged whole, the verdict stands; the client got a truncated body): ${shown}${more}`;
}

/**
 * How the upstream is reached. A plain-http upstream through a forward proxy is asked for in absolute form
 * by the forwarder itself: an agent that rewrites the path would drop headers given in raw form, and take
 * the host from it.
 */
async function upstreamAgent(upstream: URL, route: ProxyChoice, options: ProxyOptions) {
  const secure = upstream.protocol === "https:";
  const via = route.proxy && !secure ? forwardProxy(route.proxy) : undefined;
  const agent = via
    ? await createAgent(route.proxy?.protocol === "https:", { ...(options.tls ? { tls: options.tls } : {}) })
    : await createAgent(secure, {
        ...(options.tls ? { tls: options.tls } : {}),
        ...(route.proxy ? { proxy: route.proxy } : {}),
      });
  const send = (via ? route.proxy?.protocol === "https:" : secure) ? https.request : http.request;
  return { agent, via, send };
}

/**
 * Listens, answering what Node's parser refuses with a plain 400 and a request that does not arrive whole
 * in time with 408; a port in use is a usage error.
 */
async function listen(server: http.Server, options: ProxyOptions, host: string): Promise<number> {
  // Each client's exchange may hold a connection to the upstream as well as its own.
  capConnections(server, options.maxConnections ?? defaultMaxConnections(2));
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  server.requestTimeout = requestTimeoutMs;
  server.headersTimeout = requestTimeoutMs;
  // Node looks for requests past their time only this often (30 s by its default), set before it starts.
  (server as http.Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
    1000,
    Math.ceil(requestTimeoutMs / 2),
  );
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    const answering = (socket as Duplex & { _httpMessage?: http.ServerResponse })._httpMessage;
    // Once an answer has begun, another status line would corrupt it: the connection is only cut.
    if (!socket.writable || answering?.headersSent) return void socket.destroy();
    if (error.code !== "ERR_HTTP_REQUEST_TIMEOUT") {
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
      return;
    }
    // A client that is still sending keeps its half open: the connection is closed once 408 is out.
    socket.end("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n", () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new ConformanceUsageError(
              `port ${options.port ?? DEFAULT_PROXY_PORT} on ${host} is in use: pick another with ${namesOf(options).port} (0 for any free one)`,
            )
          : error,
      ),
    );
    server.listen(options.port ?? DEFAULT_PROXY_PORT, host, resolve);
  });
  return (server.address() as AddressInfo).port;
}

/**
 * One request of the proxy's own at start, without a key (the suite's "no header" request: refused with 401,
 * it changes nothing), so that an upstream it cannot reach stops it with the suite's one-line errors.
 */
async function probe(
  upstream: URL,
  route: ProxyChoice,
  options: ProxyOptions,
  timeoutMs: number,
  operations: ReturnType<typeof readOperations>,
  secrets: readonly string[],
) {
  const listPath = pathOf(operationOfKind(operations, "list"));
  const client = await createHttpClient(upstream, {
    timeoutMs,
    // Only whether it answers matters: a start never waits on a body that drips.
    deadlineMs: Math.min(timeoutMs, options.deadlineMs ?? DEFAULT_DEADLINE_MS),
    commonHeaders: { ...options.headers },
    ...(options.tls ? { tls: options.tls } : {}),
    ...(route.proxy ? { proxy: route.proxy } : {}),
    names: namesOf(options),
  });
  try {
    const exchange = await client.send("GET", listPath, { accept: "application/json" });
    const problem = runProblem(exchange, upstream, route, namesOf(options));
    if (problem) throw new TargetUnreachableError(problem, secrets);
  } finally {
    client.close();
  }
}

/**
 * An exchange judged, or marked as one the proxy could not judge: whatever an answer holds, one exchange's
 * trouble never stops the proxy serving the others, nor leaves a held answer unsent.
 */
function judgeSafely(forwarded: ForwardedExchange, context: JudgeContext): JudgedExchange {
  try {
    return judgeExchange(forwarded, context);
  } catch (error) {
    forwarded.notJudged = `the proxy could not judge it: ${error instanceof Error ? error.message : String(error)}`;
    return judgeExchange(forwarded, context);
  }
}

function violationMessage(judged: JudgedExchange): string {
  const failed = judged.checks.filter((check) => check.status === "failed");
  const parts = [
    ...failed.map((check) => `${check.id}: ${check.message} (${check.spec ?? ""})`),
    ...judged.findings.map((finding) => `state.${finding.rule}: ${finding.message}`),
  ];
  return `the upstream's answer (${judged.status}) breaks the contract: ${parts.join("; ")}`;
}

function namesOf(options: ProxyOptions): SettingNames {
  return options.settingNames ?? PROXY_OPTION_NAMES;
}

function forwardProxy(proxy: URL): ForwardProxy {
  const credentials =
    proxy.username || proxy.password
      ? `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`
      : undefined;
  return {
    hostname: hostnameOf(proxy),
    port: proxy.port || (proxy.protocol === "https:" ? "443" : "80"),
    ...(credentials !== undefined
      ? { authorization: `Basic ${Buffer.from(credentials).toString("base64")}` }
      : {}),
  };
}
