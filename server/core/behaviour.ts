import type { Behaviour, BehaviourRule, OperationId } from "../../contract/types.ts";

/** Statuses any operation can be forced to answer, for outage drills, beside those openapi.yaml documents. */
export const SIMULATED_FAILURE_STATUSES = [500, 502, 503, 504] as const;

/** A world's delay and forced-response rules; a rule's `times` counts down to its removal. */
export interface BehaviourState {
  delayMs: number;
  rules: BehaviourRule[];
}

export const noBehaviour = (): BehaviourState => ({ delayMs: 0, rules: [] });

/** The first rule left for the operation, with one use taken from it. */
export function takeRule(state: BehaviourState, operation: OperationId): BehaviourRule | undefined {
  const index = state.rules.findIndex((rule) => rule.operation === operation);
  if (index === -1) return undefined;
  const rule = state.rules[index] as BehaviourRule;
  if (rule.times !== undefined) {
    if (rule.times <= 1) state.rules.splice(index, 1);
    else state.rules[index] = { ...rule, times: rule.times - 1 };
  }
  return rule;
}

/**
 * What the schema cannot say about a valid Behaviour: one of status and fault, a status the operation may
 * be forced to, a truncation only where there is a body. Returns the first problem, naming the field.
 */
export function ruleProblem(
  behaviour: Behaviour,
  forcible: (operation: OperationId) => readonly number[],
): string | undefined {
  for (const [index, rule] of (behaviour.rules ?? []).entries()) {
    const field = `rules[${index}]`;
    if ((rule.status === undefined) === (rule.fault === undefined)) {
      return `field "${field}": give exactly one of "status" and "fault"`;
    }
    const allowed = forcible(rule.operation);
    if (rule.status !== undefined && !allowed.includes(rule.status)) {
      return `field "${field}.status": ${rule.operation} can be forced to ${allowed.join(", ")} (got ${rule.status})`;
    }
    if (rule.fault === "truncate" && rule.operation !== "listOrders") {
      return `field "${field}.fault": truncate cuts a body in half, and only listOrders answers with one`;
    }
  }
  return undefined;
}

export function behaviourJson(state: BehaviourState): string {
  return JSON.stringify({ delayMs: state.delayMs, rules: state.rules });
}
