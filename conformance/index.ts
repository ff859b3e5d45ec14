export type { ConformanceHooks, HookContext, ProvidedIds } from "./hooks.ts";
export { HookError } from "./hooks.ts";
export type { Exchange } from "./http-client.ts";
export type { CheckResult, Outcome, Report, ScenarioResult } from "./report.ts";
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
