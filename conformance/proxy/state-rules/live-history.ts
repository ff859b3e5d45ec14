import type { MemoryBudget } from "../../judging/memory-budget.ts";
import type { OrderIndex } from "../../judging/order-index.ts";
import type { History, HistoryOperation } from "../../model/history.ts";
import { checkHistory, describeFinding, type HistoryRule } from "../../model/linearizability.ts";
import type { ExchangeRef } from "./traffic-rule.ts";

/**
 * The proxy's observed history, per view of the store and per order, checked against the spec's model
 * (model/linearizability.ts) as explore's histories are. An order's story starts with the first cancel of
 * it the proxy sees, in a state the proxy cannot know (the model's `unknown`), and holds that cancel, the
 * later ones and what each later list showed of the order. Each order is judged apart, whenever its story
 * grows, under whichever of the spec's open choices explains it. Stories are kept within a byte budget
 * charged to the process's account; past it the oldest stories are forgotten whole, so that an order is
 * only judged on a story the window holds from its start.
 */

/** A finding of the model in one order's story, worded as explore words it, with the exchanges it names. */
export interface StoryFinding {
  rule: HistoryRule;
  orderId: string;
  message: string;
  earlier: ExchangeRef;
  later: ExchangeRef;
}

/** One order's story, just checked. */
export interface StoryChecked {
  orderId: string;
  findings: readonly StoryFinding[];
}

/** What a story costs, roughly: the operation and its exchange's label, and a record digest's text. */
const OPERATION_BYTES = 160;
const RECORD_BYTES = 64;
const STORY_BYTES = 256;

export const DEFAULT_HISTORY_BYTES = 32 * 1024 * 1024;

interface Story {
  key: string;
  view: string;
  orderId: string;
  operations: HistoryOperation[];
  /** The exchange of each operation, for the findings and the labels. */
  refs: ExchangeRef[];
  records: string[];
  recordIds: Map<string, number>;
  /** The last list kept, and the latest answer of a cancel kept: a list like the last one after both says nothing new. */
  lastList: number;
  lastCancelAnsweredAt: number;
  bytes: number;
}

export class LiveHistory {
  /** Every story, oldest first, keyed by view and order. */
  readonly #stories = new Map<string, Story>();
  /** Each view's stories by order, to project a list onto them. */
  readonly #byView = new Map<string, Map<string, Story>>();
  #bytes = 0;
  /** Whether a story was forgotten to stay within the budget. */
  cut = false;

  constructor(
    private readonly maxBytes: number = DEFAULT_HISTORY_BYTES,
    private readonly account?: MemoryBudget,
  ) {}

  /** A cancel answered in a view: starts the order's story, or adds to it, and checks it. */
  cancel(view: string, orderId: string, status: number, at: ExchangeRef): StoryChecked[] {
    const key = `${view}\n${orderId}`;
    let story = this.#stories.get(key);
    if (!story) story = this.#begin(key, view, orderId);
    const { sentAt, answeredAt } = this.#instants(at);
    this.#add(story, { op: "cancel", client: at.seq, orderId, sentAt, answeredAt, status }, at);
    story.lastCancelAnsweredAt = Math.max(story.lastCancelAnsweredAt, answeredAt);
    const checked = this.#check(story);
    this.#keepWithinBudget();
    return [checked];
  }

  /** A list read whole in a view: what it showed of each order with a story there, checked where it says something new. */
  list(view: string, orders: OrderIndex, at: ExchangeRef): StoryChecked[] {
    const stories = this.#byView.get(view);
    if (!stories) return [];
    const { sentAt, answeredAt } = this.#instants(at);
    const checked: StoryChecked[] = [];
    for (const story of [...stories.values()]) {
      const digest = orders.recordDigest(story.orderId);
      if (this.#saysNothingNew(story, digest, sentAt)) continue;
      const shown = new Map<string, number>();
      if (digest !== undefined) shown.set(story.orderId, this.#record(story, digest));
      this.#add(story, { op: "list", client: at.seq, sentAt, answeredAt, status: 200, shown }, at);
      story.lastList = story.operations.length - 1;
      checked.push(this.#check(story));
    }
    this.#keepWithinBudget();
    return checked;
  }

  /**
   * A list that shows the order as the story's last list did, begun after every cancel kept was answered,
   * fits wherever the last list fits: every cancel comes before both, so the order is the same at both.
   */
  #saysNothingNew(story: Story, digest: string | undefined, sentAt: number): boolean {
    const last = story.operations[story.lastList];
    if (last?.op !== "list" || story.lastCancelAnsweredAt > last.sentAt || last.sentAt > sentAt) return false;
    const record = last.shown?.get(story.orderId);
    if (digest === undefined) return record === undefined;
    return record !== undefined && record === story.recordIds.get(digest);
  }

  #instants(at: ExchangeRef): { sentAt: number; answeredAt: number } {
    // The proxy's instants are ms from its start, as a history's are from the run's.
    return { sentAt: at.startedAt, answeredAt: Math.max(at.endedAt, at.startedAt) };
  }

  #begin(key: string, view: string, orderId: string): Story {
    const story: Story = {
      key,
      view,
      orderId,
      operations: [],
      refs: [],
      records: [],
      recordIds: new Map(),
      lastList: -1,
      lastCancelAnsweredAt: Number.NEGATIVE_INFINITY,
      bytes: 0,
    };
    this.#stories.set(key, story);
    let stories = this.#byView.get(view);
    if (!stories) {
      stories = new Map();
      this.#byView.set(view, stories);
    }
    stories.set(orderId, story);
    this.#charge(story, STORY_BYTES + key.length * 2);
    return story;
  }

  #add(story: Story, operation: HistoryOperation, at: ExchangeRef): void {
    story.operations.push(operation);
    story.refs.push(at);
    this.#charge(story, OPERATION_BYTES);
  }

  #record(story: Story, digest: string): number {
    let id = story.recordIds.get(digest);
    if (id === undefined) {
      id = story.records.length;
      story.records.push(digest);
      story.recordIds.set(digest, id);
      this.#charge(story, RECORD_BYTES);
    }
    return id;
  }

  #charge(story: Story, bytes: number): void {
    story.bytes += bytes;
    this.#bytes += bytes;
    this.account?.take(bytes);
  }

  /** Checks the story against the model; a story with a finding is forgotten, so the next one starts anew. */
  #check(story: Story): StoryChecked {
    const history: History = {
      given: { pending: [], shipped: [], missing: [], unknown: [story.orderId] },
      records: story.records,
      operations: story.operations,
    };
    const verdict = checkHistory(history);
    const findings = verdict.findings.map((finding): StoryFinding => {
      const refs = finding.operations.map((index) => story.refs[index] as ExchangeRef);
      const labels = refs.map((ref) => ref.label).join(", ");
      return {
        rule: finding.rule,
        orderId: story.orderId,
        message: `${describeFinding(finding, history)}; exchanges ${labels}`,
        earlier: refs[0] as ExchangeRef,
        later: refs[refs.length - 1] as ExchangeRef,
      };
    });
    if (findings.length > 0) this.#forget(story);
    return { orderId: story.orderId, findings };
  }

  #forget(story: Story): void {
    this.#stories.delete(story.key);
    const stories = this.#byView.get(story.view);
    stories?.delete(story.orderId);
    if (stories?.size === 0) this.#byView.delete(story.view);
    this.#bytes -= story.bytes;
    this.account?.give(story.bytes);
  }

  #over(): boolean {
    return (
      this.#bytes > this.maxBytes || (this.account !== undefined && this.account.held > this.account.limit)
    );
  }

  /** Forgets the oldest stories until the history is within its budget (and the account within its limit). */
  #keepWithinBudget(): void {
    while (this.#over() && this.#stories.size > 0) this.forgetOldest(1);
  }

  /** Forgets the oldest stories until `bytes` are given back, or none is left; says the window was cut. */
  forgetOldest(bytes: number): void {
    let given = 0;
    for (const story of this.#stories.values()) {
      if (given >= bytes) return;
      given += story.bytes;
      this.#forget(story);
      this.cut = true;
    }
  }

  /** Bytes the stories hold, for the bounds' tests. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Stories kept, for the bounds' tests. */
  get stories(): number {
    return this.#stories.size;
  }
}
