export {
  EXPLORE_DEFAULTS,
  type ExploreOptions,
  type ExploreResult,
  explore,
} from "./explore/explore.ts";
export type { OrderIds } from "./explore/orders.ts";
export type { Exchange } from "./judging/exchange.ts";
export { DEFAULT_PROXY_PORT } from "./proxy/defaults.ts";
export type { JudgedExchange } from "./proxy/judged-exchange.ts";
export { type ProxyOptions, type RunningProxy, runProxy } from "./proxy/run-proxy.ts";
export { DEFAULT_STATE_LIMITS, STATE_RULES, type StateLimits } from "./proxy/state-rules.ts";
export { renderHtml } from "./reports/html.ts";
export { renderJson } from "./reports/json.ts";
export { renderJunit } from "./reports/junit.ts";
export { renderMarkdown } from "./reports/markdown.ts";
export { gateExitCode, outcomeOf, type RunOutcome, type Verdict } from "./reports/outcome.ts";
export { renderPretty } from "./reports/pretty.ts";
export type {
  CheckResult,
  CoverageRow,
  Outcome,
  Report,
  RunEnd,
  ScenarioResult,
  TrafficSummary,
} from "./reports/report.ts";
export {
  type ConformanceOptions,
  ConformanceUsageError,
  DEFAULT_TIMEOUT_MS,
  runConformance,
  TargetUnreachableError,
} from "./suite/runner.ts";
export { SCENARIOS, type Scenario, type Step } from "./suite/scenarios.ts";
export type { ProvisionedOrders, ProvisionRequest } from "./target/hook-types.ts";
export type { ConformanceHooks, HookContext, ProvidedIds } from "./target/hooks.ts";
export { HookError } from "./target/hooks.ts";
