import { printable } from "../../common/printable.ts";
import { describeFinding } from "../model/linearizability.ts";
import { rulesJudgedBy } from "../model/state-rule-catalogue.ts";
import { type Element, junitXml } from "../reports/junit-xml.ts";
import { outcomeOf } from "../reports/outcome.ts";
import type { ExploreResult } from "./explore.ts";
import { coverageLine, listsNotJudgedLines, replayLines, reproducedText } from "./report-pretty.ts";

const SUITE = "petstore-conformance explore";

/**
 * JUnit XML: one testcase per property the checker judges histories by, failed when a finding breaks it.
 * A run cut short by a stop has a case of its own with an <error>, as the suite's interrupted run has, and
 * the properties no finding broke are skipped: what it covered is not a pass.
 */
export function renderExploreJunit(result: ExploreResult): string {
  const ended = interruptedCase(result) ?? notPassedCase(result);
  const testcases = [...(ended ? [ended] : []), ...propertyCases(result)];
  const totals = {
    "@_tests": testcases.length,
    "@_failures": testcases.filter((testcase) => testcase.failure !== undefined).length,
    "@_errors": testcases.filter((testcase) => testcase.error !== undefined).length,
    "@_skipped": testcases.filter((testcase) => testcase.skipped !== undefined).length,
    "@_time": (result.durationMs / 1000).toFixed(3),
  };
  const property = (name: string, value: string): Element => ({
    "@_name": name,
    "@_value": printable(value),
  });
  const xml = junitXml({
    testsuites: {
      "@_name": SUITE,
      ...totals,
      testsuite: {
        "@_name": `${SUITE} ${printable(result.target)}`,
        ...totals,
        properties: {
          property: [
            property("target", result.target),
            property("seed", String(result.seed)),
            property("ended", result.ended),
            property("coverage", coverageLine(result)),
            ...listsNotJudgedLines(result).map((line) => property("lists not judged", line.trim())),
            ...result.warnings.map((warning) => property("warning", warning)),
          ],
        },
        testcase: testcases,
      },
    },
  }) as string;
  return `${xml.trimEnd()}\n`;
}

function propertyCases(result: ExploreResult): Element[] {
  const minimal = result.finding?.minimal;
  const findings = minimal?.verdict.findings ?? [];
  return Object.entries(rulesJudgedBy("history")).map(([rule, spec]): Element => {
    const element: Element = { "@_classname": SUITE, "@_name": `${rule}: ${spec}` };
    const broken = findings.filter((finding) => finding.rule === rule);
    if (broken.length > 0 && minimal && result.finding) {
      const lines = broken.map((finding) => describeFinding(finding, minimal.history));
      element.failure = {
        "@_message": printable(`${lines[0]} (${reproducedText(result.finding)})`),
        "@_type": "HistoryFinding",
        "#text": printable([...lines, ...replayLines(result.seed, result.finding)].join("\n"), true),
      };
    } else if (result.interruptedBy !== undefined)
      element.skipped = {
        "@_message": `not judged to the end: interrupted by ${printable(result.interruptedBy)}`,
      };
    return element;
  });
}

/** The stop that cut the run short, as CI tools show a run's own error. */
function interruptedCase(result: ExploreResult): Element | undefined {
  if (result.interruptedBy === undefined) return undefined;
  const by = printable(result.interruptedBy);
  return {
    "@_classname": SUITE,
    "@_name": "run: interrupted",
    error: {
      "@_message": `interrupted by ${by}`,
      "@_type": "Interrupted",
      "#text": `interrupted by ${by}: ${coverageLine(result)}; ${result.finding ? "a finding, its shrinking cut short" : "nothing found in what was covered, which is not a pass"}`,
    },
  };
}

/**
 * A run that found nothing but is no pass (not everything checked, nothing judged): a case of its own with
 * an <error>, as its exit code 2 is, so that CI's test tab does not show it as all passed.
 */
function notPassedCase(result: ExploreResult): Element | undefined {
  const outcome = outcomeOf(result);
  if (outcome.verdict !== "partial" && outcome.verdict !== "nothing judged") return undefined;
  return {
    "@_classname": SUITE,
    "@_name": `run: ${outcome.headline}`,
    error: {
      "@_message": printable(outcome.reasons.join("; ")),
      "@_type": outcome.verdict === "partial" ? "NotEverythingChecked" : "NothingJudged",
      "#text": printable(outcome.reasons.join("\n"), true),
    },
  };
}
