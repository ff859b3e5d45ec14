import { printable } from "../../common/printable.ts";
import { junitXml } from "../reports/junit-xml.ts";
import { cell, MARK, target } from "../reports/markdown.ts";
import type { RunOutcome } from "../reports/outcome.ts";
import type { ExploreReporterName } from "./explore-options.ts";
import { escapeHtml } from "./history-drawing.ts";

/** A run that could not explore the target (exit 2): the one error, said where its reports go. */
export interface ExploreError {
  target: string;
  startedAt: string;
  durationMs: number;
  /** None for a command line refused before a seed was chosen: nothing was played. */
  seed?: number;
  message: string;
  /** The stop signal that came while it ended so: the run's exit code is the signal's, and so the verdict. */
  interruptedBy?: NodeJS.Signals;
}

const TOOL = "petstore-conformance explore";

/**
 * The report a reporter writes for a run that ended in an error before any finding: a CI job's artifact
 * step finds every file it was told to expect, each saying the error, none saying passed. The pretty
 * reporter has none: the error line on stderr is the whole of it.
 */
export function renderExploreError(error: ExploreError, reporter: ExploreReporterName): string | undefined {
  const verdict = error.interruptedBy === undefined ? "error" : "interrupted";
  const outcome: RunOutcome = { verdict, headline: verdict, reasons: [error.message] };
  switch (reporter) {
    case "json":
      return `${JSON.stringify({ tool: TOOL, outcome, ...error, passed: false }, null, 2)}\n`;
    case "junit":
      return errorJunit(error);
    case "html":
      return errorHtml(error);
    case "markdown":
      return `\n> **${cell(`error: ${printable(error.message)}`)}**\n\n### Petstore Store Orders explore: ${MARK[verdict]} ${verdict}\n\n**Target:** ${target(printable(error.target))}${error.seed === undefined ? "" : ` · **Seed:** ${error.seed}`}\n\n`;
    case "script":
      // Nothing was played, so nothing can be replayed: the script says so and fails as the run did.
      return `// ${TOOL}: nothing to replay\nconsole.error(${JSON.stringify(`nothing to replay: the run ended in an error: ${printable(error.message)}`)});\nprocess.exitCode = 2;\n`;
    case "pretty":
      return undefined;
  }
}

function errorJunit(error: ExploreError): string {
  const totals = {
    "@_tests": 1,
    "@_failures": 0,
    "@_errors": 1,
    "@_skipped": 0,
    "@_time": (error.durationMs / 1000).toFixed(3),
  };
  const xml = junitXml({
    testsuites: {
      "@_name": TOOL,
      ...totals,
      testsuite: {
        "@_name": `${TOOL} ${printable(error.target)}`,
        ...totals,
        properties: {
          property: [
            { "@_name": "target", "@_value": printable(error.target) },
            ...(error.seed === undefined ? [] : [{ "@_name": "seed", "@_value": String(error.seed) }]),
          ],
        },
        testcase: [
          {
            "@_classname": TOOL,
            "@_name": "run: the run could not explore the target",
            error: {
              "@_message": printable(error.message),
              "@_type": "RunError",
              "#text": printable(error.message),
            },
          },
        ],
      },
    },
  }) as string;
  return `${xml.trimEnd()}\n`;
}

function errorHtml(error: ExploreError): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Explore: error: ${escapeHtml(error.target)}</title>
</head>
<body>
<main>
<h1>Petstore Store Orders explore: error</h1>
<p role="alert">error: ${escapeHtml(error.message)}</p>
<dl>
<dt>Target</dt><dd>${escapeHtml(error.target)}</dd>
<dt>Started</dt><dd>${escapeHtml(error.startedAt)}</dd>
${error.seed === undefined ? "" : `<dt>Seed</dt><dd>${error.seed}</dd>\n`}</dl>
</main>
</body>
</html>
`;
}
