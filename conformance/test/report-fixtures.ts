import type { Report } from "../reports/report.ts";

/**
 * A suite's report of one scenario nothing failed in: `cancel-pending`, its cancel passed and, when
 * `notJudged`, a check a limit kept from being judged whole.
 */
export function reportOfOneScenario(notJudged: boolean): Report {
  return {
    summary: { passed: 1, failed: 0, skipped: notJudged ? 1 : 0 },
    target: "http://127.0.0.1:4010/v1",
    startedAt: "2026-11-27T00:00:00.000Z",
    warnings: [],
    requests: 2,
    retries: 0,
    durationMs: 3,
    scenarios: [
      {
        id: "cancel-pending",
        title: "Cancel a pending order",
        status: "passed",
        checks: [
          { id: "cancel-pending.cancel.status", status: "passed", message: "204" },
          ...(notJudged
            ? [
                {
                  id: "cancel-pending.pending-order-listed",
                  status: "skipped" as const,
                  message: "not judged: the list has more orders than the suite keeps within --max-memory",
                  notJudged: true as const,
                },
              ]
            : []),
        ],
      },
    ],
  };
}
