import { styleText } from "node:util";
import { printable } from "../../common/printable.ts";
import type { JudgedExchange } from "./judged-exchange.ts";

type Style = Parameters<typeof styleText>[0];

/** One exchange as a person reads it on a terminal: ✔/✖, method, path, status, time, and what failed. */
export function liveLine(judged: JudgedExchange, options: { color: boolean }): string {
  const paint = (style: Style, text: string) => (options.color ? styleText(style, text) : text);
  const failed = judged.checks.filter((check) => check.status === "failed");
  const timing = paint("dim", `${Math.round(judged.durationMs)} ms`);
  // The path and the messages quote what the client and the upstream sent: nothing of it reaches the terminal raw.
  const head = `${printable(judged.ref.label.replace(/ → .*$/, ""))} ${sentStatus(judged)} ${timing}`;
  // Judged in part, an answer broken off shows what its part broke, or that it was judged in part.
  if (judged.upstreamError !== undefined && !judgedInPart(judged)) {
    const what = judged.sentStatus === undefined ? "no answer from the upstream" : "body cut";
    return `${paint("yellow", "!")} ${head} ${paint("yellow", `${what}: ${printable(judged.upstreamError)}`)}\n`;
  }
  if (judged.operation === undefined)
    return `${paint("dim", "·")} ${head} ${paint("dim", `(not judged: ${printable(judged.notJudged ?? "")})`)}\n`;
  const problems = [
    ...failed.map((check) => `${check.id}: ${check.message}`),
    ...judged.findings.map((finding) => `state.${finding.rule}: ${finding.message}`),
  ].map((problem) => printable(problem));
  const partly = partlyJudged(judged);
  if (problems.length === 0 && partly !== undefined)
    return `${paint("dim", "·")} ${head} ${paint("dim", `(judged in part: ${printable(partly)})`)}\n`;
  if (problems.length === 0) return `${paint("green", "✔")} ${head}\n`;
  const replaced = judged.replaced ? paint("yellow", " (answered 502: --errors)") : "";
  return `${paint("red", "✖")} ${head}${replaced}\n${problems.map((problem) => `    ${paint("red", problem)}\n`).join("")}`;
}

/** One exchange as a JSON line, for logs and machines; written by hand, as it is written for every exchange. */
export function jsonLine(judged: JudgedExchange): string {
  // One pass over the checks: most exchanges pass them all, and then nothing more is made of them.
  let failedCount = 0;
  let firstSkipped: string | undefined;
  for (const check of judged.checks) {
    if (check.status === "failed") failedCount++;
    else if (check.status === "skipped") firstSkipped ??= check.message;
  }
  // What an answer broke fails it, also when it broke off after: a part judged is never "passed".
  const verdict =
    judged.findings.length > 0 || failedCount > 0
      ? "failed"
      : judged.upstreamError !== undefined && !judgedInPart(judged)
        ? "no-answer"
        : judged.operation === undefined
          ? "not-judged"
          : (judged.notJudged ?? firstSkipped ?? judged.brokenOff) !== undefined
            ? "partly-judged"
            : "passed";
  let line = `{"seq":${judged.ref.seq},"method":${JSON.stringify(judged.method)},"path":${JSON.stringify(judged.pathname)},"status":${sentStatus(judged)},"durationMs":${Math.round(judged.durationMs * 10) / 10},"verdict":"${verdict}"`;
  if (judged.operation) line += `,"operation":"${judged.operation}"`;
  if (judged.notJudged) line += `,"notJudged":${JSON.stringify(judged.notJudged)}`;
  if (judged.upstreamError !== undefined) line += `,"upstreamError":${JSON.stringify(judged.upstreamError)}`;
  if (judged.sentStatus !== undefined || (judged.brokenOff !== undefined && judged.status !== undefined))
    line += `,"bodyCut":true`;
  if (judged.brokenOff !== undefined) line += `,"notWhole":${JSON.stringify(judged.brokenOff)}`;
  if (judged.replaced) line += `,"replaced":true`;
  return `${line},"failed":${failedCount === 0 ? "[]" : failuresOf(judged)},"findings":${judged.findings.length === 0 ? "[]" : findingsOf(judged)}}\n`;
}

/**
 * The status the client was sent: the upstream's, also when its answer broke off after the head went out;
 * the proxy's 502 when the client got no answer of the upstream's.
 */
function sentStatus(judged: JudgedExchange): number {
  return judged.status ?? judged.sentStatus ?? 502;
}

function failuresOf(judged: JudgedExchange): string {
  const failed = judged.checks.filter((check) => check.status === "failed");
  return JSON.stringify(failed.map((check) => ({ id: check.id, message: check.message, spec: check.spec })));
}

function findingsOf(judged: JudgedExchange): string {
  return JSON.stringify(
    judged.findings.map((finding) => ({
      id: `state.${finding.rule}`,
      message: finding.message,
      exchanges: [finding.earlier.seq, finding.later.seq],
    })),
  );
}

/** Whether what came of an answer that was not whole was judged. */
function judgedInPart(judged: JudgedExchange): boolean {
  return judged.brokenOff !== undefined && judged.operation !== undefined;
}

/** Why a judged exchange was judged only in part (a check skipped on it: a list past a bound), if it was. */
function partlyJudged(judged: JudgedExchange): string | undefined {
  if (judged.operation === undefined) return undefined;
  return (
    judged.notJudged ??
    judged.checks.find((check) => check.status === "skipped")?.message ??
    (judged.brokenOff === undefined ? undefined : `the answer was not whole: ${judged.brokenOff}`)
  );
}
