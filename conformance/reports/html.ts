import { printable } from "../../common/printable.ts";
import { oneLinePerCheck } from "./check-lines.ts";
import { coverageByOperation, neverSeen, trafficSentence } from "./coverage.ts";
import { endedLine } from "./describe.ts";
import { outcomeOf } from "./outcome.ts";
import type { CheckResult, Report, ScenarioResult } from "./report.ts";

const MARK = { passed: "✔", failed: "✖", skipped: "–" } as const;

/**
 * One self-contained page to look at and attach to a ticket: no request leaves it (styles and the one
 * small script are inline), every value from the target is escaped. Summary first, then each scenario;
 * failed checks are open with their evidence, and a switch shows failures only.
 */
export function renderHtml(report: Report): string {
  const { passed, failed, skipped } = report.summary;
  const outcome = outcomeOf(report);
  const verdict = outcome.headline;
  // The ended line already leads the page; the other reasons a run is not a pass follow it.
  const reasons = report.ended ? [] : outcome.reasons;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>Conformance ${escapeHtml(verdict)}: ${escapeHtml(report.target)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${report.ended ? `<p class="health ended" role="alert">${escapeHtml(endedLine(report.ended))}</p>\n` : ""}${report.health ? `<p class="health" role="alert">${escapeHtml(report.health)}</p>\n` : ""}${reasons.map((reason) => `<p class="health" role="alert">${escapeHtml(reason)}</p>\n`).join("")}<h1>Petstore Store Orders conformance: <span class="${outcome.verdict === "passed" ? "passed" : "failed"}">${escapeHtml(verdict)}</span></h1>
<section aria-labelledby="summary-heading">
<h2 id="summary-heading">Summary</h2>
<dl class="summary">
<dt>Target</dt><dd>${escapeHtml(report.target)}</dd>
<dt>Started</dt><dd>${escapeHtml(report.startedAt)}</dd>
<dt>Checks</dt><dd>${counted(passed, "passed")}, ${counted(failed, "failed")}, ${skipped} skipped</dd>
<dt>Scenarios</dt><dd>${report.scenarios.length} (${report.scenarios.filter((s) => s.status === "failed").length} failed)</dd>
<dt>Requests</dt><dd>${report.requests}${report.retries > 0 ? ` (${report.retries} retried after 429)` : ""} in ${report.durationMs} ms</dd>
</dl>
${report.warnings.length > 0 ? `<ul class="warnings">${report.warnings.map((warning) => `<li>warning: ${escapeHtml(warning)}</li>`).join("")}</ul>` : ""}
${(report.notes ?? []).length > 0 ? `<ul class="notes">${(report.notes ?? []).map((note) => `<li>note: ${escapeHtml(note)}</li>`).join("")}</ul>` : ""}
<p><label><input type="checkbox" id="failures-only"> Show only what did not pass</label></p>
</section>
${orderedForReading(report.scenarios.map(oneLinePerCheck)).map(renderScenario).join("\n")}
${renderCoverage(report)}</main>
<script>
document.getElementById("failures-only").addEventListener("change", function (event) {
  document.body.classList.toggle("failures-only", event.target.checked);
});
document.addEventListener("click", function (event) {
  var button = event.target.closest("button.copy");
  if (!button) return;
  var pre = document.getElementById(button.getAttribute("aria-controls"));
  var copied = function () { button.textContent = "Copied"; };
  // The text is selected at once, so Ctrl+C works where the page may not write to the clipboard (some
  // browsers, for files opened from disk); where it may, the button then says so.
  var select = function () {
    var range = document.createRange();
    range.selectNodeContents(pre);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    button.textContent = "Selected: press Ctrl+C";
  };
  select();
  if (navigator.clipboard) navigator.clipboard.writeText(pre.textContent).then(copied, function () {});
});
</script>
</body>
</html>
`;
}

function renderCoverage(report: Report): string {
  const groups = coverageByOperation(report);
  if (groups.length === 0) return "";
  const rows = groups.flatMap((group) =>
    group.rows.map(
      (row) =>
        `<tr class="${row.seen === 0 ? "never" : row.documented ? "seen" : "undocumented"}"><td><code>${escapeHtml(`${group.method} ${group.path}`)}</code></td><td>${row.status}</td><td>${row.seen === 0 ? "never" : `${row.seen}${row.documented ? "" : " (undocumented)"}`}</td></tr>`,
    ),
  );
  const missing = neverSeen(report);
  const traffic = trafficSentence(report);
  return `<section aria-labelledby="coverage-heading">
<h2 id="coverage-heading">Coverage</h2>
<table><thead><tr><th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Seen</th></tr></thead><tbody>${rows.join("")}</tbody></table>
${missing.length > 0 ? `<p>Never seen: ${escapeHtml(missing.join(", "))}</p>` : ""}${traffic ? `<p>${escapeHtml(traffic)}</p>` : ""}
</section>
`;
}

/** A count in its outcome's colour when there is any: "0 failed" in red would read as a failure. */
function counted(count: number, outcome: "passed" | "failed"): string {
  return count > 0 ? `<span class="${outcome}">${count} ${outcome}</span>` : `${count} ${outcome}`;
}

/** What failed first, then what was skipped, then what passed: a reader opens the page on the failures. */
function orderedForReading(scenarios: readonly ScenarioResult[]): ScenarioResult[] {
  const rank = { failed: 0, skipped: 1, passed: 2 } as const;
  const rankOf = (scenario: ScenarioResult) =>
    scenario.status === "passed" && notWholeIn(scenario) > 0 ? rank.skipped : rank[scenario.status];
  return [...scenarios].sort((a, b) => rankOf(a) - rankOf(b));
}

/** Checks of a scenario a limit or an unread answer kept from being judged whole. */
function notWholeIn(scenario: ScenarioResult): number {
  return scenario.checks.filter((check) => check.notJudged).length;
}

function renderScenario(scenario: ScenarioResult, index: number): string {
  if (scenario.status === "passed") {
    // One line until opened: the passing checks are there for whoever wants them, not in the way. One
    // with checks not judged whole is no pass: open, and not green.
    const passed = scenario.checks.filter((check) => check.status === "passed").length;
    const notWhole = notWholeIn(scenario);
    const counts = `${passed} ${passed === 1 ? "check" : "checks"} passed${notWhole > 0 ? `, ${notWhole} not judged whole` : ""}`;
    return `<section class="scenario passed${notWhole > 0 ? " not-whole" : ""}" aria-label="${escapeHtml(scenario.id)}: ${notWhole > 0 ? "not judged whole" : "passed"}">
<details${notWhole > 0 ? " open" : ""}><summary><span class="mark" aria-hidden="true">${notWhole > 0 ? MARK.skipped : MARK.passed}</span> <strong>${escapeHtml(scenario.id)}</strong> ${escapeHtml(scenario.title)} <span class="count">(${counts})</span></summary>
<ul class="checks">${scenario.checks.map((check, checkIndex) => renderCheck(check, `${index}-${checkIndex}`)).join("")}</ul>
</details>
</section>`;
  }
  const detail =
    scenario.status === "skipped"
      ? `<p class="reason">Skipped: ${escapeHtml(scenario.reason ?? "")}</p>`
      : `<ul class="checks">${scenario.checks.map((check, checkIndex) => renderCheck(check, `${index}-${checkIndex}`)).join("")}</ul>`;
  return `<section class="scenario ${scenario.status}" aria-labelledby="scenario-${escapeHtml(scenario.id)}">
<h2 id="scenario-${escapeHtml(scenario.id)}"><span class="mark" aria-hidden="true">${MARK[scenario.status]}</span> ${escapeHtml(scenario.id)} <span class="status">${scenario.status}</span></h2>
<p>${escapeHtml(scenario.title)}</p>
${detail}
</section>`;
}

function renderCheck(check: CheckResult, key: string): string {
  const summary = `<summary><span class="mark" aria-hidden="true">${MARK[check.status]}</span> <span class="status">${check.status}</span> <code>${escapeHtml(check.id)}</code>: ${escapeHtml(check.message)}</summary>`;
  const evidence: string[] = [];
  if (check.spec) evidence.push(`<p><strong>Spec:</strong> ${escapeHtml(check.spec)}</p>`);
  if (check.request) {
    const headers = Object.entries(check.request.headers).map(([name, value]) => `${name}: ${value}`);
    evidence.push(
      `<p><strong>Request</strong></p><pre>${escapeHtml([`${check.request.method} ${check.request.path}`, ...headers].join("\n"))}</pre>`,
    );
  }
  if (check.response) {
    const headers = Object.entries(check.response.headers).map(([name, value]) => `${name}: ${value}`);
    evidence.push(
      `<p><strong>Response</strong></p><pre>${escapeHtml([String(check.response.status), ...headers, "", check.response.body].join("\n"))}</pre>`,
    );
  }
  if (check.reproduce) {
    evidence.push(
      `<p><strong>Reproduce</strong> <button type="button" class="copy" aria-controls="reproduce-${key}">Copy</button></p><pre id="reproduce-${key}">${escapeHtml(check.reproduce)}</pre>`,
    );
  }
  return `<li class="check ${check.status}${check.notJudged ? " not-judged" : ""}"><details${check.status === "failed" || check.notJudged ? " open" : ""}>${summary}${evidence.join("")}</details></li>`;
}

/** A value as HTML text: markup escaped, and what reorders, hides or breaks text shown as escapes. */
function escapeHtml(text: string): string {
  return printable(text, true).replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

const STYLE = `
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f3f5f7}
main{max-width:70rem;margin:0 auto;padding:1rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin:.2rem 0}
section{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:.75rem 1rem;margin-bottom:1rem}
.health{background:#fff4e5;border:2px solid #8a4500;border-radius:8px;padding:.75rem 1rem;font-weight:600}
.summary{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}.summary dt{font-weight:600}.summary dd{margin:0}
.warnings{color:#8a4500}
span.passed,.status-word.passed{color:#0a6b2d}span.failed{color:#b00020}
.scenario.failed{border-left:6px solid #b00020}.scenario.passed{border-left:6px solid #0a6b2d}.scenario.skipped{border-left:6px solid #6b7280}
.status{font-size:.85em;text-transform:uppercase;letter-spacing:.03em}
.checks{list-style:none;padding:0;margin:0}.check{border-top:1px solid #eaeef2;padding:.2rem 0}
.check.failed summary{color:#b00020;font-weight:600}
summary{cursor:pointer}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.5rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
code{font-family:ui-monospace,Menlo,monospace}
table{border-collapse:collapse}th,td{text-align:left;padding:.2rem .8rem .2rem 0;border-bottom:1px solid #eaeef2}tr.never td:last-child{color:#8a4500}tr.undocumented td:last-child{color:#b00020}
.scenario.passed summary{font-weight:400}.count{color:#57606a}
button.copy{font:inherit;font-size:.85em;padding:.1rem .6rem;border:1px solid #8c959f;border-radius:6px;background:#f6f8fa;cursor:pointer}
.scenario.not-whole{border-left:6px solid #8a4500}.check.not-judged summary{color:#8a4500;font-weight:600}
.failures-only .scenario:not(.failed):not(.not-whole),.failures-only .check:not(.failed):not(.not-judged){display:none}
:focus-visible{outline:3px solid #ffbf47}
`;
