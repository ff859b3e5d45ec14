import { styleText } from "node:util";
import type { JudgedExchange } from "./judged-exchange.ts";

type Style = Parameters<typeof styleText>[0];

/** One exchange as a person reads it on a terminal: ✔/✖, method, path, status, time, and what failed. */
export function liveLine(judged: JudgedExchange, options: { color: boolean }): string {
  const paint = (style: Style, text: string) => (options.color ? styleText(style, text) : text);
  const failed = judged.checks.filter((check) => check.status === "failed");
  const timing = paint("dim", `${Math.round(judged.durationMs)} ms`);
  const head = `${judged.ref.label.replace(/ → .*$/, "")} ${judged.status ?? 502} ${timing}`;
  if (judged.upstreamError !== undefined)
    return `${paint("yellow", "!")} ${head} ${paint("yellow", `no answer from the upstream: ${judged.upstreamError}`)}\n`;
  if (judged.operation === undefined)
    return `${paint("dim", "·")} ${head} ${paint("dim", `(not judged: ${judged.notJudged})`)}\n`;
  const problems = [
    ...failed.map((check) => `${check.id}: ${check.message}`),
    ...judged.findings.map((finding) => `state.${finding.rule}: ${finding.message}`),
  ];
  if (problems.length === 0) return `${paint("green", "✔")} ${head}\n`;
  const replaced = judged.replaced ? paint("yellow", " (answered 502: --errors)") : "";
  return `${paint("red", "✖")} ${head}${replaced}\n${problems.map((problem) => `    ${paint("red", problem)}\n`).join("")}`;
}

/** One exchange as a JSON line, for logs and machines. */
export function jsonLine(judged: JudgedExchange): string {
  const verdict =
    judged.upstreamError !== undefined
      ? "no-answer"
      : judged.operation === undefined
        ? "not-judged"
        : judged.findings.length > 0 || judged.checks.some((check) => check.status === "failed")
          ? "failed"
          : "passed";
  return `${JSON.stringify({
    seq: judged.ref.seq,
    method: judged.method,
    path: judged.pathname,
    status: judged.status ?? 502,
    durationMs: Math.round(judged.durationMs * 10) / 10,
    verdict,
    ...(judged.operation ? { operation: judged.operation } : {}),
    ...(judged.notJudged ? { notJudged: judged.notJudged } : {}),
    ...(judged.upstreamError !== undefined ? { upstreamError: judged.upstreamError } : {}),
    ...(judged.replaced ? { replaced: true } : {}),
    failed: judged.checks
      .filter((check) => check.status === "failed")
      .map((check) => ({ id: check.id, message: check.message, spec: check.spec })),
    findings: judged.findings.map((finding) => ({
      id: `state.${finding.rule}`,
      message: finding.message,
      exchanges: [finding.earlier.seq, finding.later.seq],
    })),
  })}\n`;
}
