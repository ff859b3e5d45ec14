import type { Operation } from "../../contract/operations.ts";
import { recordResponse } from "../judging/exchange.ts";
import { PROXY_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import {
  type CheckResult,
  type CoverageRow,
  noTraffic,
  type Report,
  type ScenarioResult,
  type TrafficSummary,
} from "../reports/report.ts";
import { createHealth } from "../target/health.ts";
import { redactSecrets } from "../target/redact.ts";
import { CLIENT_LEFT } from "./exchange-lifecycle.ts";
import { type JudgedExchange, violates } from "./judged-exchange.ts";
import { STATE_RULES, type StateRuleName, type TrafficState } from "./state-rules.ts";
import { hiddenRequest, hiddenResponse } from "./traffic-secrets.ts";

/** Failures kept with their evidence per check; the rest are counted. Bounds the memory of a long run. */
export const FAILURES_KEPT = 100;
const EXAMPLES_KEPT = 5;

interface CheckTally {
  passed: number;
  failed: number;
  /** Exchanges on which the check could not be judged (a list judged in part), with the first reason. */
  skipped?: { count: number; first: string };
  spec?: string;
  failures: CheckResult[];
}

/**
 * The observed traffic folded into what the suite's reporters read: one scenario per operation with a
 * tally per check and each failure with its exchange, the state findings as a scenario of their own, and
 * the coverage of every documented status. It keeps counts, not exchanges, so it stays small.
 */
export class TrafficLedger {
  readonly #operations: ReadonlyMap<string, Operation>;
  readonly #tallies = new Map<string, Map<string, CheckTally>>();
  readonly #exchangesPerOperation = new Map<string, number>();
  readonly #coverage = new Map<string, Map<number, number>>();
  /** Exchanges of each operation forwarded without being judged, and the first one's reason. */
  readonly #unjudgedPerOperation = new Map<string, { count: number; why: string }>();
  readonly #stateFindings = new Map<StateRuleName, CheckTally>();
  readonly #notJudged = new Map<string, { count: number; examples: Set<string> }>();
  readonly #upstreamFailures: string[] = [];
  /** Per operation, the requests for it the upstream never answered whole (not judged, so not counted). */
  readonly #unansweredPerOperation = new Map<string, number>();
  readonly #unreplaced: string[] = [];
  readonly #faults: string[] = [];
  readonly #notWhole: string[] = [];
  readonly #leftByClient: string[] = [];
  #leftByClientCount = 0;
  readonly #health = createHealth();
  readonly #traffic: TrafficSummary = noTraffic();

  constructor(
    operations: ReadonlyMap<string, Operation>,
    /** How the caller names its settings in the report's warnings. */
    readonly names: SettingNames = PROXY_OPTION_NAMES,
  ) {
    this.#operations = operations;
  }

  /** `hide`: hides the exchange's secrets in the evidence kept of it (the rest is hidden already). */
  record(judged: JudgedExchange, hide: (text: string) => string = (text) => text): void {
    const traffic = this.#traffic;
    traffic.exchanges++;
    if (judged.replaced) traffic.replaced++;
    if (judged.cutOff) traffic.cutOff++;
    if (judged.fault) {
      this.#countFault(`${judged.ref.label}: ${judged.notJudged}`);
      return;
    }
    if (judged.brokenOff === CLIENT_LEFT) this.#recordLeftByClient(judged);
    else if (judged.brokenOff !== undefined) this.#recordNotWhole(judged);
    if (judged.upstreamError !== undefined) {
      traffic.upstreamFailures++;
      if (this.#upstreamFailures.length < EXAMPLES_KEPT)
        this.#upstreamFailures.push(`${judged.ref.label}: ${judged.upstreamError}`);
      // What came of an answer that broke off may still have been judged in part.
      if (judged.operation === undefined) {
        this.#countUnanswered(judged);
        return;
      }
    }
    if (judged.operation === undefined) {
      this.#recordNotJudged(judged);
      return;
    }
    traffic.judged++;
    if (judged.answer)
      this.#health.answer(judged.status ?? 0, judged.answer.contentType, judged.answer.bytes.length === 0);
    const operation = judged.operation;
    this.#exchangesPerOperation.set(operation, (this.#exchangesPerOperation.get(operation) ?? 0) + 1);
    this.#countSeen(operation, judged.status);
    this.#recordChecks(operation, judged);
    if (judged.unheld !== undefined && !judged.replaced && violates(judged)) {
      traffic.unreplaced++;
      if (this.#unreplaced.length < EXAMPLES_KEPT)
        this.#unreplaced.push(`${judged.ref.label} (${judged.unheld})`);
    }
    this.#recordFindings(judged, hide);
  }

  /**
   * A fault of the proxy's own outside an exchange's parts (a step after it, the HAR, a report): said in
   * the report. `hide` is applied to the message, which may quote what the traffic sent.
   */
  fault(where: string, error: unknown, hide: (text: string) => string = (text) => text): void {
    const message = error instanceof Error ? error.message : String(error);
    this.#countFault(hide(`${where}: ${message}`));
  }

  /** Runs one step of the proxy's own; one that throws is a fault here, and the caller goes on. */
  attempt(where: string, run: () => void, hide?: (text: string) => string): void {
    try {
      run();
    } catch (error) {
      this.fault(where, error, hide);
    }
  }

  #countUnanswered(judged: JudgedExchange): void {
    const operation = judged.unansweredOperation;
    if (operation !== undefined)
      this.#unansweredPerOperation.set(operation, (this.#unansweredPerOperation.get(operation) ?? 0) + 1);
  }

  #countFault(text: string): void {
    this.#traffic.faults++;
    if (this.#faults.length < EXAMPLES_KEPT) this.#faults.push(text);
  }

  /**
   * An exchange that ended without a whole answer is never judged whole: counted in `judgedInPart` (by its
   * checks when a part was judged) so that a gate does not pass it, and in `notWhole` to say why.
   */
  #recordNotWhole(judged: JudgedExchange): void {
    this.#traffic.notWhole++;
    if (!judged.checks.some((check) => check.notJudged)) this.#traffic.judgedInPart++;
    if (this.#notWhole.length < EXAMPLES_KEPT)
      this.#notWhole.push(`${judged.ref.label}: ${judged.brokenOff}`);
  }

  /**
   * An answer its client stopped reading (a page left, a fetch aborted): the app's choice, not the
   * upstream's. What came was judged, and a violation in it fails; the rest is said, not held against a gate.
   */
  #recordLeftByClient(judged: JudgedExchange): void {
    this.#leftByClientCount++;
    if (this.#leftByClient.length < EXAMPLES_KEPT) this.#leftByClient.push(judged.ref.label);
  }

  /** A status an operation was answered with, judged or not: the coverage says the traffic had it. */
  #countSeen(operation: string, status: number | undefined): void {
    if (status === undefined) return;
    let seen = this.#coverage.get(operation);
    if (seen === undefined) {
      seen = new Map<number, number>();
      this.#coverage.set(operation, seen);
    }
    seen.set(status, (seen.get(status) ?? 0) + 1);
  }

  #recordNotJudged(judged: JudgedExchange): void {
    this.#traffic.notJudged++;
    const operation = judged.unjudgedOperation;
    if (operation !== undefined) {
      this.#countSeen(operation, judged.status);
      const forOperation = this.#unjudgedPerOperation.get(operation);
      if (forOperation) forOperation.count++;
      else this.#unjudgedPerOperation.set(operation, { count: 1, why: judged.notJudged ?? "not judged" });
    }
    if (judged.overLimit && judged.brokenOff === undefined) this.#countJudgedInPart(judged, judged.notJudged);
    const why = judged.notJudged ?? "not judged";
    const entry = this.#notJudged.get(why) ?? { count: 0, examples: new Set<string>() };
    entry.count++;
    if (entry.examples.size < EXAMPLES_KEPT) entry.examples.add(`${judged.method} ${judged.pathname}`);
    this.#notJudged.set(why, entry);
  }

  #countJudgedInPart(judged: JudgedExchange, why: string | undefined): void {
    this.#traffic.judgedInPart++;
    this.#traffic.firstJudgedInPart ??= `${judged.ref.label}: ${why ?? "not judged"}`;
  }

  #recordChecks(operation: string, judged: JudgedExchange): void {
    let tallies = this.#tallies.get(operation);
    if (tallies === undefined) {
      tallies = new Map<string, CheckTally>();
      this.#tallies.set(operation, tallies);
    }
    const notJudged = judged.checks.find((check) => check.notJudged);
    if (judged.brokenOff !== CLIENT_LEFT && notJudged) this.#countJudgedInPart(judged, notJudged.message);
    for (const check of judged.checks) {
      let tally = tallies.get(check.id);
      if (tally === undefined) {
        tally = { passed: 0, failed: 0, failures: [] };
        tallies.set(check.id, tally);
      }
      if (check.spec !== undefined) tally.spec = check.spec;
      if (check.status === "failed") {
        tally.failed++;
        if (tally.failures.length < FAILURES_KEPT)
          tally.failures.push({ ...check, message: `${judged.ref.label}: ${check.message}` });
      } else if (check.status === "passed") tally.passed++;
      else if (tally.skipped) tally.skipped.count++;
      else tally.skipped = { count: 1, first: `${judged.ref.label}: ${check.message}` };
    }
  }

  #recordFindings(judged: JudgedExchange, hide: (text: string) => string): void {
    for (const finding of judged.findings) {
      const tally = this.#stateFindings.get(finding.rule) ?? { passed: 0, failed: 0, failures: [] };
      this.#stateFindings.set(finding.rule, tally);
      tally.failed++;
      if (tally.failures.length < FAILURES_KEPT) {
        tally.failures.push({
          id: `state.${finding.rule}`,
          status: "failed",
          message: finding.message,
          spec: STATE_RULES[finding.rule],
          request: hiddenRequest(judged.exchange.request, hide),
          ...(judged.exchange.response
            ? { response: hiddenResponse(recordResponse(judged.exchange.response), hide) }
            : {}),
        });
      }
    }
  }

  get failed(): number {
    let failed = 0;
    for (const tallies of this.#tallies.values())
      for (const tally of tallies.values()) failed += tally.failed;
    for (const tally of this.#stateFindings.values()) failed += tally.failed;
    return failed;
  }

  report(context: {
    target: string;
    startedAt: string;
    durationMs: number;
    warnings: readonly string[];
    state: TrafficState;
    secrets: readonly string[];
  }): Report {
    const scenarios: ScenarioResult[] = [];
    const summary = { passed: 0, failed: 0, skipped: 0 };
    const warnings = [...context.warnings];
    for (const operation of this.#operations.values()) {
      const exchanges = this.#exchangesPerOperation.get(operation.operationId) ?? 0;
      const title = `${operation.method} ${operation.path}: ${exchanges === 1 ? "1 exchange" : `${exchanges} exchanges`} judged`;
      if (exchanges === 0) {
        summary.skipped++;
        scenarios.push({
          id: operation.operationId,
          title,
          status: "skipped",
          reason: this.#whyNoExchange(operation.operationId),
          checks: [],
        });
        continue;
      }
      const checks = this.#checksOf(this.#tallies.get(operation.operationId) ?? new Map(), summary, warnings);
      scenarios.push({ id: operation.operationId, title, status: statusOf(checks), checks });
    }
    scenarios.push(this.#stateScenario(context.state, summary, warnings));
    const notes = [...context.state.notes.values()].map(
      (note) => `${note.message}${note.count > 1 ? ` (seen ${note.count} times)` : ""}`,
    );
    this.#trafficWarnings(warnings);
    const verdict = this.#health.verdict();
    return redactSecrets(
      {
        summary,
        target: context.target,
        startedAt: context.startedAt,
        ...(verdict ? { health: verdict } : {}),
        warnings,
        ...(notes.length > 0 ? { notes } : {}),
        requests: this.#traffic.exchanges,
        retries: 0,
        durationMs: context.durationMs,
        scenarios,
        coverage: this.#coverageRows(),
        traffic: {
          ...this.#traffic,
          ...(this.#upstreamFailures[0] !== undefined
            ? { firstUpstreamFailure: this.#upstreamFailures[0] }
            : {}),
        },
      },
      context.secrets,
    );
  }

  /** Why an operation has no exchange judged: none came, or the upstream answered none of them whole. */
  #whyNoExchange(operation: string): string {
    const unjudged = this.#unjudgedPerOperation.get(operation);
    if (unjudged !== undefined)
      return `${unjudged.count === 1 ? "1 request" : `${unjudged.count} requests`} for this operation went through the proxy, forwarded without being judged (${unjudged.why})`;
    const unanswered = this.#unansweredPerOperation.get(operation) ?? 0;
    if (unanswered === 0) return "no request for this operation went through the proxy";
    return `${unanswered === 1 ? "1 request" : `${unanswered} requests`} for this operation got no whole answer from the upstream (${this.#upstreamFailures[0] ?? "see the warnings"}), so none was judged`;
  }

  /** What the traffic summary says in words: exchanges not judged, upstream failures, faults of its own. */
  #trafficWarnings(warnings: string[]): void {
    for (const [why, { count, examples }] of this.#notJudged) {
      warnings.push(
        `${count} ${count === 1 ? "request was" : "requests were"} forwarded without being judged (${why}), e.g. ${[...examples].join(", ")}`,
      );
    }
    if (this.#traffic.upstreamFailures > 0) {
      warnings.push(
        `${this.#traffic.upstreamFailures} ${this.#traffic.upstreamFailures === 1 ? "request" : "requests"} got no whole answer from the upstream (a 502 from the proxy, or an answer cut short after its head; not judged): ${this.#upstreamFailures.join("; ")}`,
      );
    }
    if (this.#traffic.notWhole > 0) {
      warnings.push(
        `${this.#traffic.notWhole} ${this.#traffic.notWhole === 1 ? "exchange" : "exchanges"} ended without a whole answer (cut at the stop, by ${this.names.deadline}, by the client leaving, or by the upstream), so judged in part at most: ${this.#notWhole.join("; ")}`,
      );
    }
    if (this.#leftByClientCount > 0) {
      const count = this.#leftByClientCount;
      warnings.push(
        `${count} ${count === 1 ? "answer was" : "answers were"} left by the client before ${count === 1 ? "it was" : "they were"} whole (what came was judged; a client that stops reading is the app's choice): ${this.#leftByClient.join("; ")}`,
      );
    }
    if (this.#traffic.unreplaced > 0) {
      warnings.push(
        `${this.#traffic.unreplaced} ${this.#traffic.unreplaced === 1 ? "answer" : "answers"} that broke a rule reached the app unchanged: each went on before it was judged, so ${this.names.errors} could not replace it: ${this.#unreplaced.join("; ")}`,
      );
    }
    if (this.#traffic.faults > 0) {
      warnings.unshift(
        `the proxy itself failed ${this.#traffic.faults === 1 ? "once" : `${this.#traffic.faults} times`} (an exchange it failed on was ended there and not judged): ${this.#faults.join("; ")}`,
      );
    }
  }

  #checksOf(tallies: Map<string, CheckTally>, summary: Report["summary"], warnings: string[]): CheckResult[] {
    const checks: CheckResult[] = [];
    for (const [id, tally] of tallies) {
      summary.passed += tally.passed;
      summary.failed += tally.failed;
      const skipped = tally.skipped?.count ?? 0;
      const total = tally.passed + tally.failed + skipped;
      const notJudged =
        skipped === 0
          ? ""
          : `; ${skipped} not judged (${skipped === 1 ? "" : "the first: "}${tally.skipped?.first})`;
      if (tally.passed > 0 || (tally.failed === 0 && skipped === 0)) {
        checks.push({
          id,
          status: "passed",
          message: `${tally.passed} of ${total} ${total === 1 ? "exchange" : "exchanges"} passed${notJudged}`,
          ...(tally.spec ? { spec: tally.spec } : {}),
        });
      } else if (tally.failed === 0) {
        summary.skipped++;
        checks.push({
          id,
          status: "skipped",
          message: `not judged on ${total === 1 ? "its one exchange" : `any of ${total} exchanges`} (${total === 1 ? "" : "the first: "}${tally.skipped?.first})`,
          ...(tally.spec ? { spec: tally.spec } : {}),
        });
      }
      checks.push(...tally.failures);
      if (tally.failed > tally.failures.length) {
        warnings.push(
          `${id}: the first ${tally.failures.length} failures are shown with their exchanges, ${tally.failed - tally.failures.length} more were counted`,
        );
      }
    }
    return checks;
  }

  #stateScenario(state: TrafficState, summary: Report["summary"], warnings: string[]): ScenarioResult {
    const checks: CheckResult[] = [];
    for (const [rule, spec] of Object.entries(STATE_RULES) as Array<[StateRuleName, string]>) {
      const tested = state.evaluations[rule];
      const tally = this.#stateFindings.get(rule);
      const failed = tally?.failed ?? 0;
      if (tested === 0 && failed === 0) {
        summary.skipped++;
        checks.push({
          id: `state.${rule}`,
          status: "skipped",
          message: "the traffic never put this rule to the test",
          spec,
        });
        continue;
      }
      const held = Math.max(tested - failed, 0);
      summary.passed += held;
      summary.failed += failed;
      if (held > 0 || failed === 0)
        checks.push({
          id: `state.${rule}`,
          status: "passed",
          message: `held ${held === 1 ? "once" : `${held} times`}`,
          spec,
        });
      if (tally) {
        checks.push(...tally.failures);
        if (tally.failed > tally.failures.length)
          warnings.push(
            `state.${rule}: the first ${tally.failures.length} findings are shown, ${tally.failed - tally.failures.length} more were counted`,
          );
      }
    }
    const status = statusOf(checks);
    return {
      id: "state",
      title: "The spec's state rules across the traffic, per API key and mock session",
      status,
      ...(status === "skipped" ? { reason: "the traffic put none of the rules to the test" } : {}),
      checks,
    };
  }

  #coverageRows(): CoverageRow[] {
    const rows: CoverageRow[] = [];
    for (const operation of this.#operations.values()) {
      const seen = this.#coverage.get(operation.operationId) ?? new Map<number, number>();
      const statuses = new Set([...operation.responses.keys(), ...seen.keys()]);
      for (const status of [...statuses].sort((a, b) => a - b)) {
        rows.push({
          operation: operation.operationId,
          method: operation.method,
          path: operation.path,
          status,
          documented: operation.responses.has(status),
          seen: seen.get(status) ?? 0,
        });
      }
    }
    return rows;
  }
}

function statusOf(checks: readonly CheckResult[]): ScenarioResult["status"] {
  if (checks.some((check) => check.status === "failed")) return "failed";
  return checks.every((check) => check.status === "skipped") && checks.length > 0 ? "skipped" : "passed";
}
