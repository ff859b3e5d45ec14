import { INDEXED_ORDER_BYTES, type MemoryBudget } from "../judging/memory-budget.ts";
import type { OrderIndex } from "../judging/order-index.ts";
import { rulesJudgedBy } from "../model/state-rule-catalogue.ts";
import { WRITE_OUTSIDE_CONTRACT_IN_FLIGHT } from "./state-rules/barrier.ts";
import {
  DEFAULT_HISTORY_BYTES,
  LiveHistory,
  MAX_STORY_OPERATIONS,
  type StoryChecked,
} from "./state-rules/live-history.ts";
import {
  type CancelReading,
  type ExchangeRef,
  endedBefore,
  HOLDS,
  type OrderChange,
  type OrderMemory,
  type RuleFinding,
  type RuleNote,
  readCancelStatus,
  type TestVerdict,
  type TrafficRule,
  type TrafficRuleName,
} from "./state-rules/traffic-rule.ts";
import { TRAFFIC_RULES } from "./state-rules/traffic-rules.ts";

/**
 * The spec's state rules judged across live traffic, from what the proxy saw and nothing else: it never
 * sends a request of its own to find out. The keeper remembers each view of the store (one API key, in one
 * mock session) apart, within bounds: its last list, kept as the judge read it (exact ids and record
 * digests, whatever its size), and what cancels and refusals did to its orders. The least recently used
 * views and the oldest orders are forgotten first. Beside the rules, each view's history of each cancelled
 * order is checked against the spec's model, as explore checks its histories (state-rules/live-history.ts),
 * under the open choices the view's traffic has not ruled out (state-rules/view-choices.ts). A write
 * the contract has no operation for may have changed any order: at one, all of this starts again
 * (state-rules/barrier.ts). The rules themselves are objects in state-rules/: the
 * keeper asks each of them about what the traffic showed and counts how often each was put to the test.
 */

export type { ExchangeRef } from "./state-rules/traffic-rule.ts";

/** The rules judged across live traffic, by name, with their rationale (state-rule-catalogue.ts). */
export const STATE_RULES = rulesJudgedBy("proxy");

export type StateRuleName = TrafficRuleName;

export interface StateFinding {
  rule: StateRuleName;
  message: string;
  earlier: ExchangeRef;
  later: ExchangeRef;
}

/** What the traffic showed, as the state rules read it. */
export type StateEvent =
  | {
      kind: "list";
      /** The view of the store the list is of (key and session); lists are always authenticated. */
      view: string;
      session: string;
      /**
       * The list's bytes, to notice a list the same as the view's last one; absent for a list judged as it
       * streamed, of which only the start is kept (then the lists are always compared).
       */
      bytes?: Buffer;
      /** The orders as the judge kept them: read only when the list must be compared. */
      orders: () => ListedOrders;
      /** Whether a cancel of the order has been sent and not yet answered: the list may already show it. */
      cancelInFlight?: (orderId: string) => boolean;
      /**
       * Why the judge could not keep the list whole to compare: judged only in part (over the memory
       * budget), or with orders whose ids are no int64. Said in a note, unless it is not compared anyway.
       */
      notWhole?: { judgedInPart: true } | { unindexed: number };
      /** Told why the list is compared with nothing when that must not pass a gate (see `NotCompared`). */
      notCompared?: NotCompared;
      at: ExchangeRef;
    }
  | {
      kind: "cancel";
      /** Undefined for a request without a bearer token: its refusal concerns every view of the session. */
      view: string | undefined;
      session: string;
      orderId: string;
      /**
       * Null when no answer came, or the answer's status is none the contract lists for a cancel: it may or
       * may not have taken effect.
       */
      status: number | null;
      /** Whether another cancel of the order has been sent and not yet answered. */
      cancelInFlight?: (orderId: string) => boolean;
      /** Told why an answered cancel is read as undecided when that must not pass a gate (see `NotCompared`). */
      notCompared?: NotCompared;
      at: ExchangeRef;
    };

/**
 * Told why the state rules left an exchange unjudged for a reason a gate must not pass on: its verdict came
 * after a later barrier, or a write outside the contract before it was never answered.
 */
export type NotCompared = (why: string) => void;

/** A list as the state rules keep it: each order's exact id with a digest of its record. */
export interface ListedOrders {
  readonly index: OrderIndex;
  /** Whole records by id, kept for lists of at most RECORDS_KEPT_UP_TO orders, for findings that show them. */
  readonly records?: ReadonlyMap<string, string>;
}

/** Lists of at most this many orders keep their records as text too, so a finding can show both. */
export const RECORDS_KEPT_UP_TO = 10_000;

export interface StateLimits {
  /** Views (key × session) remembered at once. */
  views: number;
  /** Orders a cancel or a refusal touched, remembered per view. */
  ordersPerView: number;
  /** Orders of the views' last lists kept in all (about 24 bytes each); past it the least recently used views' lists go. */
  listedOrders: number;
  /**
   * Bytes the views' last lists hold in all (ids and digests, records kept as text, the list's bytes for
   * the same-answer shortcut); past it the least recently used views' lists go, and a list larger than
   * all of it alone keeps no records, then nothing.
   */
  keptBytes: number;
  /** Bytes the live history checked against the spec's model holds; past it the oldest orders' stories go. */
  historyBytes: number;
}

export const DEFAULT_STATE_LIMITS: StateLimits = {
  views: 1000,
  ordersPerView: 100_000,
  listedOrders: 10_000_000,
  keptBytes: 256 * 1024 * 1024,
  historyBytes: DEFAULT_HISTORY_BYTES,
};

/**
 * The latest barriers kept with their spans: an exchange judged late is weighed against each. Older ones
 * count as one barrier over when the latest of them was, which reads a late exchange as overlapping them.
 */
const BARRIER_SPANS_KEPT = 64;

/** What one order a cancel or a refusal touched costs the view beside its id: the entry and its memory. */
const ORDER_MEMORY_BYTES = 192;

const orderMemoryBytes = (id: string) => ORDER_MEMORY_BYTES + id.length * 2;

interface View {
  session: string;
  /** Orders a cancel or a refusal touched; every other order is only in the last list. */
  orders: Map<string, OrderMemory>;
  /** What `orders` holds, as charged to the account. */
  ordersBytes: number;
  last?: { orders: ListedOrders; at: ExchangeRef };
  lastBytes?: Buffer;
  /** What `last` and `lastBytes` hold, as counted in the state's `keptBytes`. */
  keptBytes: number;
  /** A cancel or a refusal touched the view's orders since its last list. */
  touched: boolean;
}

export interface StateNote {
  message: string;
  count: number;
}

export class TrafficState {
  readonly #views = new Map<string, View>();
  /** Orders of the views' last lists, in all. */
  #listed = 0;
  /** Bytes the views' last lists hold, in all. */
  #kept = 0;
  #recent: string | undefined;
  readonly #limits: StateLimits;
  readonly #rules: readonly TrafficRule[] = Object.values(TRAFFIC_RULES);
  readonly #history: LiveHistory;
  /** How often each rule was put to the test, so that a rule never tested is reported as such. */
  readonly evaluations = Object.fromEntries(Object.keys(STATE_RULES).map((rule) => [rule, 0])) as Record<
    StateRuleName,
    number
  >;
  /** What the spec leaves open and the traffic showed: said, never failed. */
  readonly notes = new Map<string, StateNote>();
  /**
   * The latest barriers, from request to answer: an exchange that met one may come before or after it.
   * One never answered never ends: the upstream may carry it out at any later time.
   */
  readonly #barrierSpans: Array<{ startedAt: number; endedAt: number }> = [];
  /** When the first write outside the contract never answered came in: no exchange over after it is compared. */
  #unansweredSince = Number.POSITIVE_INFINITY;
  #unansweredWrites = 0;
  #firstUnanswered: string | undefined;
  /** Lists compared with nothing, and answered cancels read as undecided, for an unanswered write. */
  #unjudgedAfterUnanswered = { lists: 0, cancels: 0 };
  /** When the barriers no longer kept in `#barrierSpans` were over, the latest of them. */
  #olderBarriersEndedAt = Number.NEGATIVE_INFINITY;
  #barriers = 0;
  #firstBarrier: string | undefined;
  /** Writes outside the contract under the paths named as holding no orders: no barrier, only counted. */
  #notOrdersWrites = 0;
  #firstNotOrdersWrite: string | undefined;

  /**
   * `account`: the process's one account of what traffic makes it hold (the proxy's --max-memory), which
   * the kept lists draw from beside the answers in flight; past it, kept lists go first.
   */
  constructor(
    limits: Partial<StateLimits> = {},
    private readonly account?: MemoryBudget,
    /** What a cancel's status says happened to the order. */
    private readonly readCancel: CancelReading = readCancelStatus,
  ) {
    this.#limits = { ...DEFAULT_STATE_LIMITS, ...limits };
    this.#history = new LiveHistory(this.#limits.historyBytes, account);
    if (account) account.reclaim = (bytes) => this.#reclaim(bytes);
  }

  /** Forgets the least recently used views' lists until `bytes` are given back (or none is left). */
  #reclaim(bytes: number): void {
    let given = 0;
    for (const view of this.#views.values()) {
      if (given >= bytes) return;
      if (!view.last && view.lastBytes === undefined) continue;
      given += view.keptBytes;
      this.#forget(view);
    }
    // Then the oldest stories of the live history.
    if (given < bytes) this.#history.forgetOldest(bytes - given);
  }

  observe(event: StateEvent): StateFinding[] {
    return event.kind === "list" ? this.#observeList(event) : this.#observeCancel(event);
  }

  /**
   * A list judged only after a barrier that followed it (what it would be compared with is forgotten), or
   * over after a write never answered, is compared with nothing, and a gate is not passed on it; one
   * seen on either side of a barrier is compared with nothing, as the barrier's note says.
   */
  #observeList(event: Extract<StateEvent, { kind: "list" }>): StateFinding[] {
    const why = this.#notComparedWhy(event.at);
    if (why !== undefined) {
      if (why !== TOO_LATE) {
        this.#unjudgedAfterUnanswered.lists++;
        this.#noteUnanswered();
      }
      event.notCompared?.(why);
      return [];
    }
    const { notWhole } = event;
    if (notWhole !== undefined) {
      if ("judgedInPart" in notWhole) this.judgedInPart(event.at);
      else this.unobserved(event.at, notWhole.unindexed);
      return [];
    }
    return this.#overlapsBarrier(event) ? [] : this.#list(event);
  }

  /**
   * A cancel seen on either side of a barrier, or judged only after a barrier that followed it, may have
   * taken effect at any moment, whatever it was answered; after a write never answered, an answered one
   * is said not judged as well.
   */
  #observeCancel(event: Extract<StateEvent, { kind: "cancel" }>): StateFinding[] {
    const { at } = event;
    if (!this.#overlapsBarrier(event) && !this.#comparedTooLate(at)) return this.#cancel(event);
    if (event.status !== null && at.endedAt > this.#unansweredSince) {
      this.#unjudgedAfterUnanswered.cancels++;
      this.#noteUnanswered();
      event.notCompared?.(this.#unansweredWhy("read as a cancel that may or may not have taken effect"));
    }
    return this.#undecidedCancel({ ...event, status: null });
  }

  /**
   * Whether the exchange met a barrier: in flight at once with one, or with a write that may be one still
   * unanswered: the upstream may have handled it before or after that write.
   */
  #overlapsBarrier(event: StateEvent): boolean {
    const { startedAt, endedAt } = event.at;
    if (startedAt < this.#olderBarriersEndedAt) return true;
    if (this.#barrierSpans.some((span) => span.startedAt < endedAt && span.endedAt > startedAt)) return true;
    return event.cancelInFlight?.(WRITE_OUTSIDE_CONTRACT_IN_FLIGHT) ?? false;
  }

  /**
   * Whether an exchange over before a barrier began comes to be judged only after it (a large list's verdict
   * is late): what the rules knew before the barrier, which it would be compared with, is forgotten, so it
   * is not compared, and a gate is not passed on it.
   */
  #comparedTooLate(at: ExchangeRef): boolean {
    return this.#barrierSpans.some((span) => span.startedAt >= at.endedAt);
  }

  /** Why a list is compared with nothing in a way a gate must not pass, if it is. */
  #notComparedWhy(at: ExchangeRef): string | undefined {
    if (this.#comparedTooLate(at)) return TOO_LATE;
    if (at.endedAt > this.#unansweredSince) return this.#unansweredWhy("not compared with other lists");
    return undefined;
  }

  #unansweredWhy(what: string): string {
    return `${what}: ${this.#firstUnanswered} was never answered, so it may take effect at any later time`;
  }

  /**
   * A write outside the contract that may have taken effect (state-rules/barrier.ts): it may have changed
   * any order, so every view's last list and what cancels and refusals did to its orders are forgotten,
   * but for cancels whose effect is undecided (they may take effect after it too), and the live history
   * starts again. `what` names the exchange in the report's note. One never answered (cut by the proxy's
   * deadline, the upstream gone, its client left) may still be carried out at any later time, as a history
   * checker holds an operation whose outcome is unknown: it stays in flight with every exchange after it.
   */
  barrier(at: ExchangeRef, what: string, { unanswered = false }: { unanswered?: boolean } = {}): void {
    this.#barrierSpans.push({
      startedAt: at.startedAt,
      endedAt: unanswered ? Number.POSITIVE_INFINITY : at.endedAt,
    });
    if (unanswered) {
      this.#unansweredSince = Math.min(this.#unansweredSince, at.startedAt);
      this.#unansweredWrites++;
      this.#firstUnanswered ??= what;
      this.#noteUnanswered();
    }
    if (this.#barrierSpans.length > BARRIER_SPANS_KEPT) {
      const oldest = this.#barrierSpans.shift();
      if (oldest) this.#olderBarriersEndedAt = Math.max(this.#olderBarriersEndedAt, oldest.endedAt);
    }
    this.#barriers++;
    this.#firstBarrier ??= what;
    for (const view of this.#views.values()) {
      if (view.last || view.lastBytes !== undefined) this.#forget(view);
      for (const [id, memory] of view.orders) {
        if (memory.undecided !== undefined) {
          view.orders.set(id, { undecided: memory.undecided });
          continue;
        }
        this.#dropOrder(view, id);
      }
      view.touched = view.orders.size > 0;
    }
    this.#history.barrier();
    const writes = this.#barriers === 1 ? "1 write" : `${this.#barriers} writes`;
    this.notes.set("state-rules-restarted", {
      message: `the state rules started again after ${writes} outside the contract (first: ${this.#firstBarrier}): a write the contract has no operation for, answered other than 4xx, may have changed any order, so what the rules knew of every order was forgotten there, and exchanges that overlapped it were compared with nothing`,
      count: 1,
    });
  }

  /** The note of the writes never answered, with what they left unjudged so far. */
  #noteUnanswered(): void {
    if (this.#unansweredWrites === 0) return;
    const n = this.#unansweredWrites;
    const { lists, cancels } = this.#unjudgedAfterUnanswered;
    this.notes.set("unanswered-writes", {
      message: `${n === 1 ? "1 write" : `${n} writes`} outside the contract ${n === 1 ? "was" : "were"} never answered (first: ${this.#firstUnanswered}): the upstream may carry ${n === 1 ? "it" : "them"} out at any later time, so from then on the state rules compared no list (${lists} not compared) and read every cancel as one that may or may not have taken effect (${cancels} answered ones); a gate does not pass such a run`,
      count: 1,
    });
  }

  /**
   * A write outside the contract that may have taken effect, under a path the proxy was told holds no
   * orders (--not-orders): no barrier, but said in a note, so that a report shows the option at work.
   */
  notOrdersWrite(what: string): void {
    this.#notOrdersWrites++;
    this.#firstNotOrdersWrite ??= what;
    const writes = this.#notOrdersWrites === 1 ? "1 write" : `${this.#notOrdersWrites} writes`;
    this.notes.set("not-orders-writes", {
      message: `${writes} outside the contract under the paths named as holding no orders (first: ${this.#firstNotOrdersWrite}) did not start the state rules again: they were taken to change no order`,
      count: 1,
    });
  }

  #cancel(event: Extract<StateEvent, { kind: "cancel" }>): StateFinding[] {
    const { orderId, status, at } = event;
    if (status === null) return this.#undecidedCancel(event);
    const outcome = this.readCancel(status);
    if (outcome === "unauthenticated") {
      // Refused for the key, which is not the key of any view that lists: whichever view of the session
      // lists the order must still show it as it was.
      for (const view of this.#views.values()) {
        if (view.session === event.session && view.last?.orders.index.has(orderId)) {
          this.#order(view, orderId).refused ??= at;
          view.touched = true;
        }
      }
      return [];
    }
    if (event.view === undefined) return [];
    const view = this.#view(event.view, event.session);
    const memory = this.#order(view, orderId);
    view.touched = true;
    const findings: StateFinding[] = [];
    const cancel = { orderId, status, outcome, at, order: memory };
    for (const rule of this.#rules) this.#count(rule, rule.onCancel?.(cancel), findings);
    this.#judgeStories(this.#storyOfCancel(view, event), findings);
    if (outcome === "other") {
      memory.undecided ??= at;
    } else if (outcome === "cancelled") {
      memory.cancelled ??= at;
    } else if (outcome === "not-pending" || outcome === "not-found") {
      if (
        outcome === "not-pending" &&
        (memory.conflicted === undefined || at.endedAt < memory.conflicted.endedAt)
      )
        memory.conflicted = at;
      if (view.last?.orders.index.has(orderId)) memory.refused ??= at;
    }
    return findings;
  }

  /**
   * A cancel with no answer, or one the contract does not list: no rule reads it, but the order may have
   * been cancelled by it at any moment since, and its story holds it so.
   */
  #undecidedCancel(event: Extract<StateEvent, { kind: "cancel" }>): StateFinding[] {
    if (event.view === undefined) return [];
    const view = this.#view(event.view, event.session);
    this.#order(view, event.orderId).undecided ??= event.at;
    view.touched = true;
    const findings: StateFinding[] = [];
    this.#judgeStories(this.#storyOfCancel(view, event), findings);
    return findings;
  }

  /** The cancel in its order's story in the live history, which starts from the view's last list. */
  #storyOfCancel(view: View, event: Extract<StateEvent, { kind: "cancel" }>): StoryChecked[] {
    const before = view.last && { index: view.last.orders.index, at: view.last.at };
    const { orderId, status, at, cancelInFlight } = event;
    return this.#history.cancel(event.view ?? "", orderId, status, at, before, cancelInFlight);
  }

  /** A test of `rule` when the verdict is not undefined, with its finding when it did not hold. */
  #count(rule: TrafficRule, verdict: TestVerdict | undefined, findings: StateFinding[]): void {
    if (verdict === undefined) return;
    this.evaluations[rule.name]++;
    if (verdict !== HOLDS) findings.push({ rule: rule.name, ...verdict });
  }

  #list(event: Extract<StateEvent, { kind: "list" }>): StateFinding[] {
    const view = this.#view(event.view, event.session);
    const findings: StateFinding[] = [];
    const { at } = event;
    const last = view.last;
    if (last) {
      const list = { earlier: last.at, at };
      for (const rule of this.#rules) this.#count(rule, rule.onList?.(list), findings);
    }
    // The same list as last time, with nothing done to its orders since: every rule holds as it did.
    if (last && !view.touched && event.bytes && view.lastBytes?.equals(event.bytes)) {
      // Kept before the stories grow: making room for them may forget it, and then it stays forgotten.
      view.last = { orders: last.orders, at };
      this.#judgeStories(
        this.#history.list(event.view, last.orders.index, at, event.cancelInFlight),
        findings,
      );
      return findings;
    }
    const current = event.orders();
    // Lists that overlapped show the store at moments in no known order: nothing to compare.
    if (last && endedBefore(last.at, at)) this.#compare(view, last, current, event, findings);
    for (const memory of view.orders.values()) memory.refused = undefined;
    this.#listed += current.index.size - (last?.orders.index.size ?? 0);
    view.last = { orders: current, at };
    // A copy: the answer's bytes may share their memory with the rest of what the socket read.
    view.lastBytes = event.bytes ? Buffer.from(event.bytes) : undefined;
    const keptBefore = this.#kept;
    this.#recount(view);
    view.touched = false;
    this.#keepListsWithinBounds(view, this.#kept - keptBefore);
    // Once the list is kept: making room for its stories lets the kept lists go first, then the stories.
    this.#judgeStories(this.#history.list(event.view, current.index, at, event.cancelInFlight), findings);
    return findings;
  }

  /** What a later list shows of each order the last one listed, read against the cancels and refusals between. */
  #compare(
    view: View,
    last: NonNullable<View["last"]>,
    current: ListedOrders,
    event: Extract<StateEvent, { kind: "list" }>,
    findings: StateFinding[],
  ): void {
    const { at } = event;
    const between = (ref: ExchangeRef | undefined) =>
      ref !== undefined && endedBefore(last.at, ref) && endedBefore(ref, at) ? ref : undefined;
    for (const [id, memory] of view.orders) {
      const cancelledBetween = between(memory.cancelled);
      const refusedBetween = between(memory.refused);
      if (!cancelledBetween && !refusedBetween) continue;
      const touched = {
        id,
        cancelledBetween,
        refusedBetween,
        inEarlier: last.orders.index.has(id),
        inLater: current.index.has(id),
      };
      for (const rule of this.#rules) this.#count(rule, rule.onOrderTouchedBetween?.(touched), findings);
    }
    last.orders.index.forEachChange(current.index, (kind, id) => {
      const memory = view.orders.get(id);
      const change: OrderChange = {
        kind,
        id,
        earlier: last.at,
        later: at,
        order: memory,
        cancelledBetween: between(memory?.cancelled),
        refusedBetween: between(memory?.refused),
        cancelInFlight: () => event.cancelInFlight?.(id) ?? false,
        records: () => recordsOf(id, { orders: last.orders, at: last.at }, { orders: current, at }),
      };
      for (const rule of this.#rules) {
        const found = rule.onOrderChange?.(change);
        if (found === undefined) continue;
        if (isNote(found)) this.#note(found.note, found.message);
        else findings.push({ rule: rule.name, ...found });
      }
    });
  }

  /**
   * Each order's story just checked puts the model's own rules to the test. A finding of the model under a
   * rule the traffic rules found in the same exchange for the same order takes its place, naming every
   * exchange the model saw (a changed record's with the rule's when they show both records); one under
   * another rule for an order they already flagged is left out, so that one defect is reported once.
   */
  #judgeStories(checked: readonly StoryChecked[], findings: StateFinding[]): void {
    for (const story of checked) {
      const kept = story.findings.filter((found) => {
        const model = {
          rule: found.rule,
          message: found.message,
          earlier: found.earlier,
          later: found.later,
        };
        const same = findings.findIndex(
          (finding) => finding.rule === found.rule && concerns(finding, found.orderId),
        );
        // The model keeps records as digests: the rule's own words follow when they show both records.
        const ruleWords = findings[same]?.message ?? "";
        const showsRecords = found.rule === "cancel-leaves-fields" && !ruleWords.includes(DIGESTS_ONLY);
        if (same !== -1)
          findings[same] = {
            ...model,
            message: showsRecords ? `${model.message}; ${ruleWords}` : model.message,
          };
        return same === -1 && !findings.some((finding) => concerns(finding, found.orderId));
      });
      const own = new Set<string>();
      for (const rule of this.#rules) {
        if (!rule.onStory) continue;
        own.add(rule.name);
        this.#count(rule, rule.onStory({ orderId: story.orderId, findings: kept }), findings);
      }
      for (const found of kept)
        if (!own.has(found.rule))
          findings.push({
            rule: found.rule,
            message: found.message,
            earlier: found.earlier,
            later: found.later,
          });
    }
    if (this.#history.capped) {
      this.#history.capped = false;
      this.#note(
        "history-story-capped",
        `an order's story in the live history reached ${MAX_STORY_OPERATIONS} operations and was forgotten, so that checking it stays cheap: the order's next story starts in an unknown state`,
      );
    }
    if (this.#history.cut) {
      this.#history.cut = false;
      this.#note(
        "history-window-cut",
        "the live history checked against the spec's model was cut to stay within the proxy's memory budget: the oldest orders' stories were forgotten, and an order seen again starts in an unknown state (past them, the oldest views' open choices, decided again from later traffic)",
      );
    }
  }

  /** The bytes a view's last list holds, counted again into the state's total. */
  #recount(view: View): void {
    this.#kept -= view.keptBytes;
    this.account?.give(view.keptBytes);
    view.keptBytes = 0;
    if (view.last) {
      const { index, records } = view.last.orders;
      view.keptBytes += index.size * INDEXED_ORDER_BYTES;
      for (const [id, record] of records ?? []) view.keptBytes += (id.length + record.length) * 2;
    }
    view.keptBytes += view.lastBytes?.length ?? 0;
    this.#kept += view.keptBytes;
    this.account?.take(view.keptBytes);
  }

  #within(): boolean {
    return this.#listed <= this.#limits.listedOrders && this.#kept <= this.#limits.keptBytes;
  }

  /** What is over the account's limit, at most `grown`: another holder's overshoot is not the lists' to make up. */
  #accountDue(grown: number): number {
    return this.account === undefined ? 0 : Math.min(this.account.held - this.account.limit, grown);
  }

  #forget(view: View): void {
    this.#listed -= view.last?.orders.index.size ?? 0;
    view.last = undefined;
    view.lastBytes = undefined;
    this.#recount(view);
  }

  /**
   * Past the bounds of what all views' last lists keep, or past the account's limit by what the list added
   * (`grown`), the least recently used views' lists are forgotten; a list past them alone keeps its ids
   * without records, then nothing (the next list is judged alone).
   */
  #keepListsWithinBounds(current: View, grown: number): void {
    let due = this.#accountDue(grown);
    for (const view of this.#views.values()) {
      if (this.#within() && due <= 0) return;
      if (view === current || !view.last) continue;
      due -= view.keptBytes;
      this.#forget(view);
    }
    if ((this.#within() && due <= 0) || !current.last) return;
    const whole = current.keptBytes;
    current.last = { orders: { index: current.last.orders.index }, at: current.last.at };
    current.lastBytes = undefined;
    this.#recount(current);
    due -= whole - current.keptBytes;
    this.#note(
      "list-kept-without-records",
      `a list too large to keep whole within ${this.#roomForLists()} was kept as ids and digests only: a later change in one of its orders is found, but not shown`,
    );
    if (this.#within() && due <= 0) return;
    this.#forget(current);
    this.#note(
      "list-not-kept",
      `a list too large to keep within ${this.#roomForLists()} was judged but not kept: the next list of its view is not compared with it`,
    );
  }

  /** The bound a list did not fit: the lists' own, or the process's memory budget when that is smaller. */
  #roomForLists(): string {
    const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`;
    const lists = this.#limits.keptBytes;
    if (this.account !== undefined && this.account.limit < lists)
      return `the proxy's memory budget of ${mib(this.account.limit)}`;
    return `the proxy's ${mib(lists)} for lists`;
  }

  /** A list of which only the start was judged: its orders are not compared with other lists. */
  judgedInPart(at: ExchangeRef): void {
    this.#note(
      "list-judged-in-part",
      `${at.label} was judged only in part (over the proxy's memory budget), so it was not compared with other lists`,
    );
  }

  /** A list whose orders cannot all be told apart by id (ids that are no int64): judged, not compared. */
  unobserved(at: ExchangeRef, unindexed: number): void {
    this.#note(
      "list-not-compared",
      `${at.label} listed ${unindexed} orders without an int64 id, so its orders were judged but not compared with other lists`,
    );
  }

  #note(kind: string, message: string): void {
    const note = this.notes.get(kind);
    if (note) note.count++;
    else this.notes.set(kind, { message, count: 1 });
  }

  #view(key: string, session: string): View {
    let view = this.#views.get(key);
    // Most traffic is one key's: the view used last is already where the cap forgets it last.
    if (view && key === this.#recent) return view;
    this.#recent = key;
    if (view) {
      // Most recently used last, so that the cap forgets the views least used.
      this.#views.delete(key);
    } else {
      view = { session, orders: new Map(), ordersBytes: 0, touched: false, keptBytes: 0 };
      if (this.#views.size >= this.#limits.views) {
        const [oldest, forgotten] = this.#views.entries().next().value ?? [];
        if (oldest !== undefined) this.#views.delete(oldest);
        this.#listed -= forgotten?.last?.orders.index.size ?? 0;
        this.#kept -= forgotten?.keptBytes ?? 0;
        this.account?.give((forgotten?.keptBytes ?? 0) + (forgotten?.ordersBytes ?? 0));
      }
    }
    this.#views.set(key, view);
    return view;
  }

  #order(view: View, id: string): OrderMemory {
    let memory = view.orders.get(id);
    if (memory) return memory;
    if (view.orders.size >= this.#limits.ordersPerView) this.#forgetOldestOrder(view);
    const bytes = orderMemoryBytes(id);
    this.#reserve(bytes);
    memory = {};
    view.orders.set(id, memory);
    view.ordersBytes += bytes;
    return memory;
  }

  /**
   * Takes room for an order's memory before it is made. When the account refuses, even once its reclaim
   * let kept lists and stories go, the least recently used views' oldest orders go, as past the cap; with
   * none left the memory is held all the same, since the cancel must be remembered to be judged soundly.
   */
  #reserve(bytes: number): void {
    const account = this.account;
    if (account === undefined) return;
    while (!account.tryTake(bytes)) {
      let oldest: View | undefined;
      for (const view of this.#views.values())
        if (view.orders.size > 0) {
          oldest = view;
          break;
        }
      if (oldest === undefined) {
        account.take(bytes);
        return;
      }
      this.#forgetOldestOrder(oldest);
    }
  }

  /**
   * Forgets the view's oldest order a cancel or a refusal touched. Its memory is what explains that order
   * leaving a list, so the view's last list goes with a cancel or refusal of it: the next list is judged
   * alone rather than flagged for an order its forgotten cancel explains.
   */
  #forgetOldestOrder(view: View): void {
    const [id, memory] = view.orders.entries().next().value ?? [];
    if (id === undefined || memory === undefined) return;
    this.#dropOrder(view, id);
    if ((memory.cancelled ?? memory.refused ?? memory.undecided) && view.last) this.#forget(view);
    this.#note(
      "orders-forgotten",
      `orders a cancel or a refusal touched were forgotten, the oldest first (past ${this.#limits.ordersPerView} in a view, or the proxy's memory budget): a view's last list was forgotten with a cancel of them, so its next list was judged alone, and a cancel whose effect was undecided may read as missing later`,
    );
  }

  /** An order's memory gone from the view, and its room back in the account. */
  #dropOrder(view: View, id: string): void {
    view.orders.delete(id);
    const bytes = orderMemoryBytes(id);
    view.ordersBytes -= bytes;
    this.account?.give(bytes);
  }

  /** Bytes the views' last lists hold, for the bounds' tests. */
  get keptBytes(): number {
    return this.#kept;
  }

  /** Orders remembered across all views (in their last lists, and touched ones), for the bounds' tests. */
  get remembered(): number {
    let total = this.#listed;
    for (const view of this.#views.values()) total += view.orders.size;
    return total;
  }
}

const TOO_LATE =
  "not compared with the lists before it: its verdict came after a later write outside the contract, at which the state rules started again";

/** Whether a traffic rule's finding is about this order: each of their messages begins with it. */
function concerns(finding: StateFinding, orderId: string): boolean {
  return /^order (\d+)/.exec(finding.message)?.[1] === orderId;
}

function isNote(found: RuleFinding | RuleNote): found is RuleNote {
  return "note" in found;
}

const DIGESTS_ONLY = "keep digests, not records";

/** An order's record in two lists, for a finding that shows both, or why only digests were kept. */
function recordsOf(
  id: string,
  earlier: { orders: ListedOrders; at: ExchangeRef },
  later: { orders: ListedOrders; at: ExchangeRef },
): string {
  const was = earlier.orders.records?.get(id);
  const now = later.orders.records?.get(id);
  return was !== undefined && now !== undefined
    ? `${was} (${earlier.at.label}), then ${now} (${later.at.label})`
    : `its record differs between ${earlier.at.label} and ${later.at.label} (lists of more than ${RECORDS_KEPT_UP_TO} orders, or whose records are too large to keep, ${DIGESTS_ONLY})`;
}
