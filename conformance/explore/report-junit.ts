import { printable } from "../../common/printable.ts";
import { describeFinding } from "../model/linearizability.ts";
import { rulesJudgedBy } from "../model/state-rule-catalogue.ts";
import { type Element, junitXml } from "../reports/junit-xml.ts";
import type { ExploreResult } from "./explore.ts";
import { coverageLine, reproducedText } from "./report-pretty.ts";

const SUITE = "petstore-conformance explore";

/** JUnit XML: one testcase per property the checker judges histories by, failed when a finding breaks it. */
export function renderExploreJunit(result: ExploreResult): string {
  const rules = Object.entries(rulesJudgedBy("history"));
  const minimal = result.finding?.minimal;
  const findings = minimal?.verdict.findings ?? [];
  const testcases = rules.map(([rule, spec]): Element => {
    const element: Element = { "@_classname": SUITE, "@_name": `${rule}: ${spec}` };
    const broken = findings.filter((finding) => finding.rule === rule);
    if (broken.length > 0 && minimal && result.finding) {
      const lines = broken.map((finding) => describeFinding(finding, minimal.history));
      element.failure = {
        "@_message": printable(`${lines[0]} (${reproducedText(result.finding)})`),
        "@_type": "HistoryFinding",
        "#text": printable(lines.join("\n"), true),
      };
    }
    return element;
  });
  const totals = {
    "@_tests": testcases.length,
    "@_failures": testcases.filter((testcase) => testcase.failure !== undefined).length,
    "@_errors": 0,
    "@_skipped": 0,
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
            ...result.warnings.map((warning) => property("warning", warning)),
          ],
        },
        testcase: testcases,
      },
    },
  }) as string;
  return `${xml.trimEnd()}\n`;
}
