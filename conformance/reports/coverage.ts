import type { CoverageRow, Report } from "./report.ts";

export interface OperationCoverage {
  operation: string;
  method: string;
  path: string;
  rows: CoverageRow[];
}

/** The coverage rows of a traffic report, one group per operation, in the contract's order. */
export function coverageByOperation(report: Report): OperationCoverage[] {
  const groups = new Map<string, OperationCoverage>();
  for (const row of report.coverage ?? []) {
    const group = groups.get(row.operation) ?? {
      operation: row.operation,
      method: row.method,
      path: row.path,
      rows: [],
    };
    group.rows.push(row);
    groups.set(row.operation, group);
  }
  return [...groups.values()];
}

/** The documented statuses no exchange showed, as `cancelOrder 409`. */
export function neverSeen(report: Report): string[] {
  return (report.coverage ?? [])
    .filter((row) => row.documented && row.seen === 0)
    .map((row) => `${row.operation} ${row.status}`);
}

/** What passed through the proxy, in one sentence. */
export function trafficSentence(report: Report): string | undefined {
  const traffic = report.traffic;
  if (!traffic) return undefined;
  const parts = [`${traffic.judged} judged`, `${traffic.notJudged} forwarded without judging`];
  if (traffic.upstreamFailures > 0)
    parts.push(`${traffic.upstreamFailures} without a whole answer from the upstream (a 502, or cut short)`);
  if (traffic.replaced > 0) parts.push(`${traffic.replaced} answered 502 for a violation (--errors)`);
  if (traffic.unreplaced > 0)
    parts.push(`${traffic.unreplaced} violating answers passed on before judged (too large to hold)`);
  if (traffic.cutOff > 0) parts.push(`${traffic.cutOff} cut off by the stop`);
  if ((traffic.notWhole ?? 0) > 0)
    parts.push(`${traffic.notWhole} ended before their answer was whole (judged in part at most)`);
  return `${traffic.exchanges} ${traffic.exchanges === 1 ? "exchange" : "exchanges"}: ${parts.join(", ")}`;
}
