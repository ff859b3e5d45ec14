/**
 * An explore result built from a recorded history, for the reports' tests: two clients' cancels of one
 * pending order, both answered 204, judged by the checker as a run would.
 */

import type { ExploreResult } from "../explore/explore.ts";
import type { PlayedHistory } from "../explore/player.ts";
import type { ShrunkFinding } from "../explore/shrink.ts";
import type { History } from "../model/history.ts";
import { checkHistory } from "../model/linearizability.ts";
import { ALL_RUN_CHOICES, type RunChoices } from "../model/spec-model.ts";

export const RECORDED_ORDER = "9007199254740993";

export function twoCancelsHistory(): History {
  return {
    given: { pending: [RECORDED_ORDER], shipped: [], missing: [], unknown: [] },
    records: [`{"id":${RECORDED_ORDER},"status":"pending"}`],
    operations: [
      { op: "list", client: 0, sentAt: 1, answeredAt: 6, status: 200, shown: new Map([[RECORDED_ORDER, 0]]) },
      { op: "cancel", client: 1, orderId: RECORDED_ORDER, sentAt: 10, answeredAt: 30, status: 204 },
      { op: "cancel", client: 0, orderId: RECORDED_ORDER, sentAt: 12, answeredAt: 31, status: 204 },
    ],
  };
}

function played(history: History, allowStaleMs: number, choices: readonly RunChoices[]): PlayedHistory {
  return {
    program: [
      [
        { wait: 1, action: { op: "list" } },
        { wait: 4, action: { op: "cancel", slot: 0 } },
      ],
      [{ wait: 10, action: { op: "cancel", slot: 0 } }],
    ],
    history,
    verdict: checkHistory(history, { allowStaleMs, choices }),
  };
}

/**
 * A run whose minimal history is `history` (two 204s by default), judged under `choices` with the staleness
 * the overrides allow.
 */
export function recordedResult(
  overrides: Partial<ExploreResult> = {},
  history: History = twoCancelsHistory(),
  choices: readonly RunChoices[] = ALL_RUN_CHOICES,
): ExploreResult {
  const minimal = played(history, overrides.allowStaleMs ?? 0, choices);
  const finding: ShrunkFinding = {
    original: minimal,
    minimal,
    reproduced: { failed: 3, of: 5 },
    candidatesTried: 4,
    originalReproduced: { failed: 3, of: 16 },
    triesPerCandidate: 15,
    choices,
    ruledOut: [],
    shrinkEnded: "minimal",
  };
  return {
    seed: 7,
    ended: "finding",
    coverage: {
      histories: 1,
      operations: 3,
      orders: 1,
      clients: 2,
      concurrentPairs: 1,
      listsConcurrentWithCancels: 0,
      lists: 1,
      listsReadWhole: 1,
      cancels: 2,
      cancelsDecided: 2,
      keyRefused: 0,
    },
    largestStaleMs: 0,
    listsNotJudged: [],
    notChecked: [],
    finding,
    target: "http://127.0.0.1:1/v1",
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 40,
    warnings: [],
    clients: 2,
    budgetMs: 1000,
    allowStaleMs: 0,
    slotKinds: ["pending"],
    ...overrides,
  };
}
