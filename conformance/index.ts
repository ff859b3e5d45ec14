export type { Exchange } from "./http-client.ts";
export type { CheckResult, Outcome, Report, ScenarioResult } from "./report.ts";
export { renderJson } from "./reporters/json.ts";
export { renderJunit } from "./reporters/junit.ts";
export { renderPretty } from "./reporters/pretty.ts";
export {
  type ConformanceOptions,
  ConformanceUsageError,
  DEFAULT_TIMEOUT_MS,
  runConformance,
  TargetUnreachableError,
} from "./runner.ts";
export { SCENARIOS, type Scenario, type Step } from "./scenarios.ts";
