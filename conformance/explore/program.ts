import fc from "fast-check";
import type { History } from "../model/history.ts";
import type { HistoryFinding } from "../model/linearizability.ts";

/**
 * What explore sends, before it is sent: each client's steps in order, each after a pause. A cancel names a
 * slot, not an id: each run (and each replay while shrinking) fills the slots with fresh orders, so one
 * program can be played again and again against orders no earlier run touched.
 */
export type Action = { op: "list" } | { op: "cancel"; slot: number };

export interface Step {
  /** Milliseconds the client waits before sending it: the random moment. */
  wait: number;
  action: Action;
}

/** One lane per client. */
export type Program = readonly (readonly Step[])[];

/** What a slot holds: a pending order (fresh in every run), a shipped one, an id no order has. */
export type SlotKind = "pending" | "shipped" | "missing";

/** The slots a program may name: pending first, so that shrinking a slot towards 0 merges orders. */
export interface SlotPlan {
  kinds: readonly SlotKind[];
}

export interface ProgramShape {
  clients: number;
  /** Steps of one client at most. */
  steps: number;
  /** Longest pause before a step, in milliseconds. */
  maxWaitMs: number;
  slots: SlotPlan;
}

/** Pending slots a program spreads its cancels over: few, so that clients meet on the same order. */
export const PENDING_SLOTS = 4;

/**
 * `pendingOrders` is how many pending orders the run can ever have (unbounded with a provision hook): a
 * program never needs more of them than that, so a run given one order still plays histories.
 */
export function slotPlan(
  haveShipped: boolean,
  haveMissing: boolean,
  pendingOrders = Number.POSITIVE_INFINITY,
): SlotPlan {
  const pendingSlots = Math.max(1, Math.min(PENDING_SLOTS, pendingOrders));
  const kinds: SlotKind[] = Array.from({ length: pendingSlots }, () => "pending");
  if (haveShipped) kinds.push("shipped");
  if (haveMissing) kinds.push("missing");
  return { kinds };
}

/**
 * Programs as fast-check arbitraries, so that its shrinker gives the smaller candidates: fewer clients,
 * fewer steps, lower slots (fewer orders). Pauses do not shrink: shorter pauses are no simpler a story,
 * and each candidate costs several runs against the target.
 */
export function programArbitrary(shape: ProgramShape): fc.Arbitrary<Program> {
  const action: fc.Arbitrary<Action> = fc.oneof(
    fc.constant<Action>({ op: "list" }),
    fc.record({ op: fc.constant("cancel" as const), slot: fc.nat({ max: shape.slots.kinds.length - 1 }) }),
  );
  const step = fc.record({ wait: fc.noShrink(fc.nat({ max: shape.maxWaitMs })), action });
  return fc.array(fc.array(step, { minLength: 1, maxLength: shape.steps }), {
    minLength: 1,
    maxLength: shape.clients,
  });
}

/** The n-th program of a seed: the same seed gives the same programs, run after run. */
export function nthProgram(arbitrary: fc.Arbitrary<Program>, seed: number, n: number): Program {
  const [program] = fc.sample(arbitrary, { seed: (seed + Math.imul(n, 0x9e3779b1)) | 0, numRuns: 1 });
  return program as Program;
}

/** Smaller programs than this one, as fast-check shrinks it. */
export function* smallerPrograms(arbitrary: fc.Arbitrary<Program>, program: Program): Iterable<Program> {
  if (!arbitrary.canShrinkWithoutContext(program)) return;
  for (const smaller of arbitrary.shrink(program, undefined)) yield smaller.value;
}

/**
 * The program without one step each time, lanes left empty dropped: what 1-minimality is checked by,
 * besides fast-check's own candidates.
 */
export function* withoutOneStep(program: Program): Iterable<Program> {
  for (let lane = 0; lane < program.length; lane++) {
    const steps = program[lane] as readonly Step[];
    for (let index = 0; index < steps.length; index++) {
      const shorter = steps.filter((_, at) => at !== index);
      yield program.map((other, at) => (at === lane ? shorter : other)).filter((other) => other.length > 0);
    }
  }
}

/**
 * The program as far as it had been sent when every operation the findings name was answered: a step sent
 * later, in the same history, cannot have caused them. Each client's operations are its steps in order,
 * less the cancels of a slot the run had no order for (never sent), so each operation is matched to the
 * next step of its kind. Undefined when every step stays, or when an operation named was never answered
 * (its effect may lie anywhere).
 */
export function withoutLaterSteps(
  program: Program,
  history: History,
  findings: readonly HistoryFinding[],
): Program | undefined {
  let answeredBy = Number.NEGATIVE_INFINITY;
  for (const finding of findings)
    for (const index of finding.operations) {
      const answeredAt = history.operations[index]?.answeredAt;
      if (answeredAt === null || answeredAt === undefined) return undefined;
      answeredBy = Math.max(answeredBy, answeredAt);
    }
  if (answeredBy === Number.NEGATIVE_INFINITY) return undefined;
  const matched = program.map(() => 0);
  const kept = program.map(() => 0);
  for (const operation of history.operations) {
    const steps = program[operation.client] ?? [];
    let at = matched[operation.client] ?? 0;
    while (at < steps.length && steps[at]?.action.op !== operation.op) at++;
    matched[operation.client] = at + 1;
    if (operation.sentAt <= answeredBy) kept[operation.client] = Math.min(at + 1, steps.length);
  }
  const shorter = program
    .map((steps, lane) => steps.slice(0, kept[lane]))
    .filter((steps) => steps.length > 0);
  return stepCount(shorter) < stepCount(program) ? shorter : undefined;
}

export function stepCount(program: Program): number {
  return program.reduce((sum, lane) => sum + lane.length, 0);
}

/** The slots a program names, each once, in order. */
export function slotsUsed(program: Program): number[] {
  const used = new Set<number>();
  for (const lane of program)
    for (const step of lane) if (step.action.op === "cancel") used.add(step.action.slot);
  return [...used].sort((a, b) => a - b);
}
