export {
  EXPLORE_DEFAULTS,
  type ExploreOptions,
  type ExploreResult,
  explore,
} from "./explore/explore.ts";
export type { OrderIds } from "./explore/orders.ts";
export type { ProvisionedOrders, ProvisionRequest } from "./hook-types.ts";
export type { ConformanceHooks, HookContext, ProvidedIds } from "./hooks.ts";
export { HookError } from "./hooks.ts";
export type { Exchange } from "./http-client.ts";
export { DEFAULT_PROXY_PORT } from "./live/defaults.ts";
export type { JudgedExchange } from "./live/judged-exchange.ts";
export { type ProxyOptions, type RunningProxy, runProxy } from "./live/run-proxy.ts";
export { DEFAULT_STATE_LIMITS, STATE_RULES, type StateLimits } from "./live/state-rules.ts";
export type { CheckResult, CoverageRow, Outcome, Report, ScenarioResult, TrafficSummary } from "./report.ts";
export { renderHtml } from "./reporters/html.ts";
export { renderJson } from "./reporters/json.ts";
export { renderJunit } from "./reporters/junit.ts";
export { renderMarkdown } from "./reporters/markdown.ts";
export { renderPretty } from "./reporters/pretty.ts";
export {
  type ConformanceOptions,
  ConformanceUsageError,
  DEFAULT_TIMEOUT_MS,
  runConformance,
  TargetUnreachableError,
} from "./runner.ts";
export { SCENARIOS, type Scenario, type Step } from "./scenarios.ts";
