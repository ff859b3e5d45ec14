import type { StateRuleOf } from "../../model/state-rule-catalogue.ts";
import type { StoryChecked } from "./live-history.ts";

/**
 * What a state rule judged across live traffic is: one object with a hook per kind of thing the traffic
 * shows. The state keeper (../state-rules.ts) remembers what the traffic did to each view of the store,
 * within bounds, and asks every rule about each cancel, each list and each order that changed between two
 * lists. A hook answers whether the event put the rule to the test and what it found; the keeper counts the
 * tests and gathers the findings, so a rule holds no state and no counter of its own.
 */

export type TrafficRuleName = StateRuleOf<"proxy">;

/** An exchange as findings name it: its number in the traffic and what it was. */
export interface ExchangeRef {
  seq: number;
  /** `#12 DELETE /v1/store/orders/5 → 204` */
  label: string;
  /** When the request came in and when its answer was over (ms from the proxy's start), to order exchanges. */
  startedAt: number;
  endedAt: number;
}

/**
 * Whether `earlier` was over before `later` began. Concurrent exchanges are in no order: the upstream may
 * have handled them either way round, so no rule reads one as the cause or the sequel of the other.
 */
export function endedBefore(earlier: ExchangeRef, later: ExchangeRef): boolean {
  return earlier.endedAt <= later.startedAt;
}

/** What the traffic showed of one order in one view, as the keeper remembers it. */
export interface OrderMemory {
  /** The first cancel of it answered 204. */
  cancelled?: ExchangeRef;
  /** The cancel answered 409 that was over first. */
  conflicted?: ExchangeRef;
  /** A refusal since the order was last listed. */
  refused?: ExchangeRef;
  /** The first cancel of it with no answer, or an answer that says nothing of its effect (a 5xx, a 429). */
  undecided?: ExchangeRef;
}

/**
 * What the answer to a cancel says happened to the order (§4.2, §5.4). The keeper reads a status through a
 * `CancelReading` it is given, so that a model of the spec can later say what a status means in a state.
 */
export type CancelOutcome = "cancelled" | "not-pending" | "not-found" | "unauthenticated" | "other";

export type CancelReading = (status: number) => CancelOutcome;

/** The spec's statuses for a cancel, read without a model of the order's state. */
export const readCancelStatus: CancelReading = (status) => {
  switch (status) {
    case 204:
      return "cancelled";
    case 409:
      return "not-pending";
    case 404:
      return "not-found";
    case 401:
      return "unauthenticated";
    default:
      return "other";
  }
};

/** A cancel answered in a view, with what the view remembered of the order before this answer. */
export interface CancelSeen {
  orderId: string;
  status: number;
  outcome: CancelOutcome;
  at: ExchangeRef;
  order: Readonly<OrderMemory>;
}

/** A list of a view whose earlier list the keeper still holds. */
export interface ListAfterList {
  earlier: ExchangeRef;
  at: ExchangeRef;
}

/** An order a cancel or a refusal touched between two lists of its view that are compared. */
export interface OrderTouchedBetween {
  id: string;
  cancelledBetween?: ExchangeRef;
  refusedBetween?: ExchangeRef;
  inEarlier: boolean;
  inLater: boolean;
}

/** An order of the earlier list that the later list does not show, or shows with another record. */
export interface OrderChange {
  kind: "vanished" | "changed";
  id: string;
  /** The two lists compared. */
  earlier: ExchangeRef;
  later: ExchangeRef;
  /** What the view remembers of the order, if a cancel or a refusal ever touched it. */
  order: Readonly<OrderMemory> | undefined;
  cancelledBetween?: ExchangeRef;
  refusedBetween?: ExchangeRef;
  /** Whether a cancel of the order has been sent and not yet answered: the later list may already show it. */
  cancelInFlight(): boolean;
  /** The order's record in both lists, or why only their digests were kept. */
  records(): string;
}

export interface RuleFinding {
  message: string;
  earlier: ExchangeRef;
  later: ExchangeRef;
}

/** What the spec leaves open and the traffic showed: said once per kind, counted, never failed. */
export interface RuleNote {
  note: string;
  message: string;
}

/** The event put the rule to the test and it held. */
export const HOLDS = "holds";

/** For an event that puts the rule to the test: whether it held, or what broke it. */
export type TestVerdict = typeof HOLDS | RuleFinding;

/**
 * A state rule as the proxy judges it. The keeper counts a test for every hook answer but undefined;
 * `onOrderChange` does not count, as a change is what breaks a test counted by the other hooks.
 */
export interface TrafficRule<Name extends TrafficRuleName = TrafficRuleName> {
  readonly name: Name;
  /** An order's live history checked against the spec's model (live-history.ts). */
  onStory?(story: StoryChecked): TestVerdict | undefined;
  onCancel?(cancel: CancelSeen): TestVerdict | undefined;
  onList?(list: ListAfterList): TestVerdict | undefined;
  onOrderTouchedBetween?(order: OrderTouchedBetween): TestVerdict | undefined;
  onOrderChange?(change: OrderChange): RuleFinding | RuleNote | undefined;
}
