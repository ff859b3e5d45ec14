import { randomBytes } from "node:crypto";
import { INT64_MAX, isInt64 } from "../contract/exact-json.ts";
import { type Contract, loadContract } from "../contract/openapi.ts";
import { type Operation, readOperations } from "../contract/operations.ts";
import { SESSION_NAME } from "../server/core/sessions.ts";
import { createHttpClient, type Exchange, type HttpClient } from "./http-client.ts";
import { type CheckResult, type Report, type ScenarioResult, summarize } from "./report.ts";
import { checkResponse } from "./response-checks.ts";
import { checkRule, type RuleContext } from "./rules.ts";
import { type AuthVariant, type OrderRef, SCENARIOS, type Scenario, type Step } from "./scenarios.ts";
import { type ListSnapshot, snapshotOf } from "./snapshot.ts";

export interface ConformanceOptions {
  /** The deployment's base address, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  /** A pending order the run may cancel; without it nothing is cancelled. */
  pendingOrderId?: string;
  shippedOrderId?: string;
  /** An id no order has; by default one absent from the list. */
  missingOrderId?: string;
  timeoutMs?: number;
  /**
   * A session of the project's mock (`X-Mock-Session` on every request): each run on a new name starts
   * from fresh fixtures. Real deployments ignore the header.
   */
  session?: string;
  scenarios?: readonly Scenario[];
  contract?: Contract;
  /** Sees every request and its response as sent and received (its Authorization header masked). */
  onExchange?: (exchange: Exchange) => void;
}

/** Options a run cannot start with (exit code 2 on the command line). */
export class ConformanceUsageError extends Error {
  override name = "ConformanceUsageError";
}

/** The target answered nothing at all: refused, unknown host (exit code 2 on the command line). */
export class TargetUnreachableError extends Error {
  override name = "TargetUnreachableError";
}

export const DEFAULT_TIMEOUT_MS = 10_000;

export async function runConformance(options: ConformanceOptions): Promise<Report> {
  const started = performance.now();
  const baseUrl = parseBaseUrl(options.baseUrl);
  const ids = {
    pending: parseOrderIdOption("--pending-order-id", options.pendingOrderId),
    shipped: parseOrderIdOption("--shipped-order-id", options.shippedOrderId),
    missing: parseOrderIdOption("--missing-order-id", options.missingOrderId),
  };
  if (!options.apiKey)
    throw new ConformanceUsageError("an API key is required (--api-key or PETSTORE_API_KEY)");
  const warnings: string[] = [];
  if (!/\/v1\/?$/.test(baseUrl.pathname)) {
    warnings.push(
      `the base URL ${baseUrl.href} does not end with /v1, the path segment of the interface version (§9.1)`,
    );
  }

  const contract = options.contract ?? loadContract();
  const operations = readOperations(contract);
  if (options.session !== undefined && !SESSION_NAME.test(options.session)) {
    throw new ConformanceUsageError(
      "--session must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'",
    );
  }
  const client = createHttpClient(
    baseUrl,
    options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    options.session !== undefined ? { "x-mock-session": options.session } : {},
  );
  try {
    const session = new Session(client, operations, options.apiKey, options.onExchange);
    const initial = await session.snapshot();
    if (initial.exchange.unreachable) {
      throw new TargetUnreachableError(`cannot reach ${baseUrl.href}: ${initial.exchange.error}`);
    }
    const missing = ids.missing ?? absentId(initial);
    if (!ids.missing && !initial.orders)
      warnings.push(`the list could not be read, so order ${missing} is assumed not to exist`);
    const resolved: Partial<Record<"pending" | "shipped" | "missing", string>> = { ...ids, missing };

    const scenarios = options.scenarios ?? SCENARIOS;
    const runPhase = (phase: number) =>
      Promise.all(
        scenarios
          .filter((scenario) => scenario.phase === phase)
          .map((scenario) => session.run(scenario, resolved)),
      );
    const phaseOne = await runPhase(1);
    const afterRefused = await session.snapshot();
    const phaseTwo = await runPhase(2);
    const final = await session.snapshot();

    const results = [...phaseOne, ...phaseTwo].map(({ scenario, result, scenarioList }) => {
      if (result.status === "skipped") return result;
      const context: RuleContext = {
        initial,
        afterRefused,
        final,
        ...(scenarioList ? { scenarioList } : {}),
        ...(resolved.pending ? { pendingId: resolved.pending } : {}),
        ...(resolved.shipped ? { shippedId: resolved.shipped } : {}),
      };
      const checks = [
        ...result.checks,
        ...(scenario.rules ?? []).map((rule) => checkRule(rule, scenario.id, context)),
      ];
      return {
        ...result,
        checks,
        status: checks.some((check) => check.status === "failed") ? "failed" : "passed",
      } as ScenarioResult;
    });
    const order = new Map(scenarios.map((scenario, index) => [scenario.id, index]));
    results.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));

    return redactKey(
      {
        summary: summarize(results),
        target: baseUrl.href,
        warnings,
        requests: client.count,
        durationMs: Math.round(performance.now() - started),
        scenarios: results,
      },
      options.apiKey,
    );
  } finally {
    client.close();
  }
}

interface ScenarioRun {
  scenario: Scenario;
  result: ScenarioResult;
  scenarioList?: ListSnapshot;
}

class Session {
  readonly #unknownKey = `unknown-${randomBytes(12).toString("hex")}`;

  constructor(
    private readonly client: HttpClient,
    private readonly operations: Map<string, Operation>,
    private readonly apiKey: string,
    private readonly onExchange: ((exchange: Exchange) => void) | undefined,
  ) {}

  async snapshot(): Promise<ListSnapshot> {
    const operation = this.operation("listOrders");
    const exchange = await this.send(operation, "/store/orders", "valid");
    const checked = checkResponse(exchange, operation, [200], "", "snapshot");
    return snapshotOf(exchange, checked.status, checked.body);
  }

  async run(
    scenario: Scenario,
    ids: Partial<Record<"pending" | "shipped" | "missing", string>>,
  ): Promise<ScenarioRun> {
    const base = { id: scenario.id, title: scenario.title };
    if (scenario.needs && !ids[scenario.needs]) {
      const reason = `no --${scenario.needs}-order-id given: the run cancels or refuses only orders named for it`;
      return { scenario, result: { ...base, status: "skipped", reason, checks: [] } };
    }
    const checks: CheckResult[] = [];
    let scenarioList: ListSnapshot | undefined;
    for (const step of scenario.steps) {
      const checkId = `${scenario.id}.${step.name}`;
      const path = this.pathOf(step, ids);
      if (path === undefined) {
        const ref = step.order as string;
        checks.push({ id: checkId, status: "skipped", message: `skipped: no --${ref}-order-id given` });
        continue;
      }
      const operation = this.operation(step.operation);
      const exchange = await this.send(operation, path, step.auth ?? "valid");
      const checked = checkResponse(exchange, operation, step.expect, step.because, checkId);
      checks.push(...checked.checks);
      if (step.operation === "listOrders" && (step.auth ?? "valid") === "valid") {
        scenarioList = snapshotOf(exchange, checked.status, checked.body);
      }
    }
    const failed = checks.some((check) => check.status === "failed");
    const skippedSteps = checks.filter((check) => check.status === "skipped").length;
    return {
      scenario,
      result: {
        ...base,
        status: failed ? "failed" : "passed",
        ...(skippedSteps > 0 ? { reason: `${skippedSteps} step(s) skipped for lack of an order id` } : {}),
        checks,
      },
      ...(scenarioList ? { scenarioList } : {}),
    };
  }

  private pathOf(
    step: Step,
    ids: Partial<Record<"pending" | "shipped" | "missing", string>>,
  ): string | undefined {
    const query = step.query ? `?${step.query}` : "";
    if (step.operation === "listOrders") return `/store/orders${query}`;
    const segment = orderSegment(step.order ?? "missing", ids);
    return segment === undefined ? undefined : `/store/orders/${encodeURIComponent(segment)}${query}`;
  }

  private operation(operationId: string): Operation {
    const operation = this.operations.get(operationId);
    if (!operation) throw new Error(`openapi.yaml has no operation ${operationId}`);
    return operation;
  }

  private async send(operation: Operation, path: string, auth: AuthVariant): Promise<Exchange> {
    const headers: Record<string, string> = { accept: "application/json" };
    const authorization = this.authorization(auth);
    if (authorization !== undefined) headers.authorization = authorization;
    const exchange = await this.client.send(operation.method, path, headers);
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
        return `Basic ${Buffer.from(`conformance:${this.apiKey}`).toString("base64")}`;
      case "empty-bearer":
        return "Bearer ";
      case "unknown-key":
        return `Bearer ${this.#unknownKey}`;
    }
  }
}

function orderSegment(
  ref: OrderRef,
  ids: Partial<Record<"pending" | "shipped" | "missing", string>>,
): string | undefined {
  return typeof ref === "string" ? ids[ref] : ref.raw;
}

/**
 * An int64 id that the first list does not contain: one past the largest, or the first gap. Without a
 * readable list, an id near the top of int64 that real stores are unlikely to have reached.
 */
function absentId(initial: ListSnapshot): string {
  if (!initial.orders) return String(INT64_MAX - 1n);
  const ids = [...initial.orders.keys()].map((id) => BigInt(id)).filter(isInt64);
  let largest = 0n;
  for (const id of ids) if (id > largest) largest = id;
  if (largest < INT64_MAX) return String(largest + 1n);
  const taken = new Set(ids);
  let candidate = 1n;
  while (taken.has(candidate)) candidate++;
  return String(candidate);
}

function parseBaseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConformanceUsageError(`--base-url must be an absolute http(s) URL (got "${text}")`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConformanceUsageError(`--base-url must be an http or https URL (got "${text}")`);
  }
  return url;
}

function parseOrderIdOption(flag: string, text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text) || !isInt64(BigInt(text))) {
    throw new ConformanceUsageError(`${flag} must be an int64 integer (got "${text}")`);
  }
  return BigInt(text).toString();
}

/**
 * The key never appears in a report, whatever a server echoes back. Requests are masked when recorded;
 * this covers what came back: messages and response excerpts (not ids or titles, which the run wrote).
 */
function redactKey(report: Report, apiKey: string): Report {
  const hide = (text: string) => text.split(apiKey).join("***");
  for (const scenario of report.scenarios) {
    for (const check of scenario.checks) {
      check.message = hide(check.message);
      if (check.response) {
        check.response.body = hide(check.response.body);
        for (const [name, value] of Object.entries(check.response.headers))
          check.response.headers[name] = hide(value);
      }
    }
  }
  return report;
}
