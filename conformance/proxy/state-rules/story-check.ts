import type { History } from "../../model/history.ts";
import { checkHistory, type HistoryVerdict } from "../../model/linearizability.ts";
import type { RunChoices } from "../../model/spec-model.ts";

/**
 * One order's story judged from every status the order may have when the proxy first sees it: the model's
 * unknown (pending, shipped or already cancelled) or absent, as an id the proxy never saw listed may be. The
 * story passes when either explains it, and each combination of the open choices that either explains
 * stays possible: a 404 for an order never listed says nothing of what a second cancel answers.
 */
export function checkStory(
  orderId: string,
  history: History,
  choices: readonly RunChoices[],
): HistoryVerdict {
  const unknown = checkHistory(history, { choices });
  if (unknown.ok && unknown.consistentChoices.length === choices.length) return unknown;
  const given = { pending: [], shipped: [], missing: [orderId], unknown: [] };
  const absent = checkHistory({ ...history, given }, { choices });
  const consistentChoices = choices.filter(
    (each) => unknown.consistentChoices.includes(each) || absent.consistentChoices.includes(each),
  );
  if (unknown.ok && absent.ok) {
    const passing = choices.filter((each) => unknown.choices.includes(each) || absent.choices.includes(each));
    return { ...unknown, choices: passing, consistentChoices };
  }
  return { ...(absent.ok ? absent : unknown), consistentChoices };
}
