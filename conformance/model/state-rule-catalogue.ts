/**
 * Every state rule of the spec that this project judges: one name each, its section and why it holds.
 * Three evaluators read it: the suite's (snapshots of the list around its scenarios,
 * suite/suite-state-rules.ts), the proxy's (live traffic, proxy/state-rules/, whose live history the
 * linearizability checker also reads) and the linearizability checker of concurrent histories
 * (model/linearizability.ts). A rule two judge has the same name in both
 * reports. A new rule is added here first, then as one object to each evaluator that can see it.
 */

export type Evaluator = "suite" | "proxy" | "history";

interface StateRule {
  spec: string;
  judgedBy: readonly Evaluator[];
}

export const STATE_RULE_CATALOGUE = {
  // The suite judges once-ness through the race scenario's statuses (exactly one 204), not as a state rule.
  "cancel-once": {
    spec: "§3 rule 1, §4.2: only a pending order can be cancelled, so an order is cancelled (204) once",
    judgedBy: ["proxy", "history"],
  },
  "no-cancel-after-conflict": {
    spec: "§3, §4.2: an order answered 409 is not pending (shipped orders cannot be reversed), so it is never cancelled later",
    judgedBy: ["proxy", "history"],
  },
  "listed-orders-stay": {
    spec: "§4.1: the list returns every order placed in the store, so a listed order stays listed unless it is cancelled",
    judgedBy: ["suite", "proxy", "history"],
  },
  "cancel-leaves-fields": {
    spec: "§2, §3: a cancel changes the order's status, which the Order record does not carry, so its fields stay as they were",
    judgedBy: ["proxy", "history"],
  },
  "refusals-change-nothing": {
    spec: "§4.2, §5.4: a refused request (401, 404, 409) changes nothing, so the next list shows the order as before",
    judgedBy: ["suite", "proxy"],
  },
  "shipped-order-unchanged": {
    spec: "§3, §4.2: when the order is not pending the call fails with 409 and the order is unchanged",
    judgedBy: ["suite"],
  },
  "pending-order-listed": {
    spec: "§4.1: the list returns every order placed in the store, so an order that can be cancelled is listed",
    judgedBy: ["suite"],
  },
  "list-ignores-paging-parameters": {
    spec: "§4.1, §8, §9.2: no filtering or pagination; the call returns every order placed in the store",
    judgedBy: ["suite"],
  },
  "cancel-answer-matches-state": {
    spec: "§3, §4.2: a cancel answers 204 for a pending order, 409 for one that is not pending and 404 for one the store does not have",
    judgedBy: ["proxy", "history"],
  },
  "absent-order-unlisted": {
    spec: "§4.1, §4.2: an order the store does not have (its cancel answers 404) is not in the list",
    judgedBy: ["proxy", "history"],
  },
  "stale-read": {
    spec: "§4.1, §3: a list that begins after a cancel was answered shows the order as the cancel left it, not as before",
    judgedBy: ["proxy", "history"],
  },
} as const satisfies Record<string, StateRule>;

type Catalogue = typeof STATE_RULE_CATALOGUE;

/** The rules an evaluator judges. */
export type StateRuleOf<E extends Evaluator> = {
  [Name in keyof Catalogue]: E extends Catalogue[Name]["judgedBy"][number] ? Name : never;
}[keyof Catalogue];

/** Each rule an evaluator judges, by name, with its rationale. */
export function rulesJudgedBy<E extends Evaluator>(evaluator: E): Record<StateRuleOf<E>, string> {
  const judged: Record<string, string> = {};
  for (const [name, rule] of Object.entries(STATE_RULE_CATALOGUE) as Array<[string, StateRule]>)
    if (rule.judgedBy.includes(evaluator)) judged[name] = rule.spec;
  return judged as Record<StateRuleOf<E>, string>;
}
