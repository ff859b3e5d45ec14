import type { CheckResult, ScenarioResult } from "./report.ts";

/**
 * A scenario's checks as a reader sees them: one line per check. A check that failed anywhere is shown once,
 * as failed: its first failure (with that one's evidence) saying how often it failed and what its passed
 * line said ("held 4 times"), so that no report shows the same check both passed and failed. The JSON
 * report keeps every entry.
 */
export function oneLinePerCheck(scenario: ScenarioResult): ScenarioResult {
  const byId = new Map<string, CheckResult[]>();
  for (const check of scenario.checks) byId.set(check.id, [...(byId.get(check.id) ?? []), check]);
  if (byId.size === scenario.checks.length) return scenario;
  const checks = [...byId.values()].map((entries): CheckResult => {
    const failures = entries.filter((check) => check.status === "failed");
    const [first] = failures;
    if (first === undefined) return entries[0] as CheckResult;
    const others = entries.filter((check) => check.status !== "failed").map((check) => check.message);
    const times = failures.length === 1 ? "once" : `${failures.length} times`;
    const counts = [`failed ${times}${failures.length > 1 ? ", the first shown" : ""}`, ...others].join("; ");
    return { ...first, message: `${first.message} (${counts})` };
  });
  return { ...scenario, checks };
}
