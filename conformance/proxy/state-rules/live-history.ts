import type { MemoryBudget } from "../../judging/memory-budget.ts";
import type { OrderIndex } from "../../judging/order-index.ts";
import type { History, HistoryOperation } from "../../model/history.ts";
import type { HistoryFinding, HistoryRule, HistoryVerdict } from "../../model/linearizability.ts";
import { ALL_RUN_CHOICES, cancelStatusDecides, type RunChoices } from "../../model/spec-model.ts";
import { storyFindingWords } from "./finding-words.ts";
import { ForgottenStories } from "./forgotten-stories.ts";
import { checkStory } from "./story-check.ts";
import type { ExchangeRef } from "./traffic-rule.ts";
import {
  type ChoiceRuledOut,
  describeShownElsewhere,
  RULED_OUT_BYTES,
  VIEW_CHOICES_BYTES,
  ViewChoices,
} from "./view-choices.ts";

/**
 * The proxy's observed history, per view of the store and per order, checked against the spec's model
 * (model/linearizability.ts) as explore's histories are. An order's story starts with the first cancel of
 * it the proxy sees, in a state the proxy cannot know (the model's `unknown`, or absent: story-check.ts),
 * and holds the view's latest list before it when that list showed the order (unless a forgotten story's
 * cancels of the order may have taken effect after that list began: forgotten-stories.ts), that cancel,
 * the later ones and what each later list showed of the order. A cancel whose answer says nothing of its
 * effect (a status the model does not decide on, or none) may take effect at any moment after it was sent;
 * while a cancel of the order is still in flight, the story is judged with such a cancel standing for it,
 * and judged again once none is. Each order is judged apart, whenever its story grows, under the open
 * choices its view has not ruled out (view-choices.ts): a deployment decides them once for every order,
 * so a story that narrows them has the view's other stories that passed only under what it ruled out
 * judged again. Stories and what each view ruled out are kept within a byte budget charged to the
 * process's account; past it the oldest stories are forgotten whole, so that an order is only judged on a
 * story the window holds from its start, and then the oldest views' choices.
 */

/** A finding of the model in one order's story, worded as the proxy's rules word theirs (finding-words.ts). */
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

/** A list the state keeper holds for a view: the orders it showed, with their record digests. */
export interface ListSeen {
  index: OrderIndex;
  at: ExchangeRef;
}

export const DEFAULT_HISTORY_BYTES = 32 * 1024 * 1024;

/**
 * Operations one story holds at most: each is checked whole whenever it grows, so a longer one (a client
 * retrying a 409 again and again) would cost the event loop quadratic time. Past it the story is forgotten
 * as a budget cut forgets one, and the order's next story starts in an unknown state.
 */
export const MAX_STORY_OPERATIONS = 256;

/** Whether a cancel of the order has been sent and not yet answered. */
export type CancelInFlight = (orderId: string) => boolean;

const NOTHING_IN_FLIGHT: CancelInFlight = () => false;

interface Story {
  key: string;
  view: string;
  orderId: string;
  operations: HistoryOperation[];
  /** The exchange of each operation, for the findings and the labels. */
  refs: ExchangeRef[];
  records: string[];
  recordIds: Map<string, number>;
  /**
   * The last list kept, and when the last cancel kept was over at the proxy (answered or not): a list like
   * the last one after both says nothing new. Leaving it out may miss a finding, never make one.
   */
  lastList: number;
  lastCancelAnsweredAt: number;
  /** Until when its cancels may take effect: infinite once one was undecided. */
  settledAt: number;
  /** The combinations of the open choices its last check passed under, to judge it again when none is left. */
  passing: readonly RunChoices[];
  /** Last checked with a cancel still in flight standing in: judged again once none is. */
  provisional: boolean;
  /** Until when cancels of the order in its forgotten stories may take effect (forgotten-stories.ts). */
  forgottenUntil: number;
  /** When its earliest operation was sent. */
  earliestSentAt: number;
  bytes: number;
}

export class LiveHistory {
  /** Every story, oldest first, keyed by view and order. */
  readonly #stories = new Map<string, Story>();
  /** Each view's stories by order, to project a list onto them. */
  readonly #byView = new Map<string, Map<string, Story>>();
  /** The open choices each view has narrowed, oldest first; a view not here has ruled out none. */
  readonly #choices = new Map<string, ViewChoices>();
  #bytes = 0;
  /** Orders whose story was forgotten, so that a list older than its cancels does not start the next one. */
  readonly #forgotten: ForgottenStories;
  /** What the event being judged says of the cancels in flight. */
  #inFlight: CancelInFlight = NOTHING_IN_FLIGHT;
  /** What the event being judged took from the account: all it may have to give back when that is over. */
  #taken = 0;
  /** Whether a story, or a view's choices, was forgotten to stay within the budget. */
  cut = false;
  /** Whether a story was forgotten for its length (MAX_STORY_OPERATIONS). */
  capped = false;

  constructor(
    private readonly maxBytes: number = DEFAULT_HISTORY_BYTES,
    private readonly account?: MemoryBudget,
  ) {
    this.#forgotten = new ForgottenStories(maxBytes / 16, (bytes) => {
      this.#bytes += bytes;
      if (bytes >= 0) {
        this.#taken += bytes;
        this.account?.take(bytes);
      } else this.account?.give(-bytes);
    });
  }

  /**
   * A cancel answered in a view: starts the order's story, or adds to it, and checks it. `status`: null
   * when no answer came. `before`: the view's latest list, with which a new story starts when it showed
   * the order. `inFlight`: whether other cancels of an order are still on their way.
   */
  cancel(
    view: string,
    orderId: string,
    status: number | null,
    at: ExchangeRef,
    before?: ListSeen,
    inFlight: CancelInFlight = NOTHING_IN_FLIGHT,
  ): StoryChecked[] {
    this.#inFlight = inFlight;
    this.#taken = 0;
    const key = `${view}\n${orderId}`;
    let story = this.#stories.get(key);
    if (story && this.#full(story)) story = undefined;
    if (!story) story = this.#begin(key, view, orderId, before);
    const { sentAt, answeredAt } = this.#instants(at);
    const answered = status === null ? null : answeredAt;
    this.#add(story, { op: "cancel", client: at.seq, orderId, sentAt, answeredAt: answered, status }, at);
    story.lastCancelAnsweredAt = Math.max(story.lastCancelAnsweredAt, answeredAt);
    // An answer that decides nothing leaves the cancel free to take effect at any later moment.
    const settled = cancelStatusDecides(status) ? answeredAt : Number.POSITIVE_INFINITY;
    story.settledAt = Math.max(story.settledAt, settled);
    const checked = this.#checkInView(view, [story]);
    this.#keepWithinBudget();
    return checked;
  }

  /**
   * A list read whole in a view: what it showed of each order with a story there, checked where it says
   * something new or where the story was last checked with a cancel in flight that no longer is.
   */
  list(
    view: string,
    orders: OrderIndex,
    at: ExchangeRef,
    inFlight: CancelInFlight = NOTHING_IN_FLIGHT,
  ): StoryChecked[] {
    this.#inFlight = inFlight;
    this.#taken = 0;
    const stories = this.#byView.get(view);
    if (!stories) return [];
    const { sentAt, answeredAt } = this.#instants(at);
    const grown: Story[] = [];
    for (const story of [...stories.values()]) {
      if (this.#full(story)) continue;
      const digest = orders.recordDigest(story.orderId);
      if (this.#saysNothingNew(story, digest, sentAt)) {
        if (story.provisional && !inFlight(story.orderId)) grown.push(story);
        continue;
      }
      this.#addList(story, digest, sentAt, answeredAt, at);
      grown.push(story);
    }
    const checked = this.#checkInView(view, grown);
    this.#keepWithinBudget();
    return checked;
  }

  /**
   * A write outside the contract that may have changed any order (barrier.ts): every story is forgotten,
   * as one with a finding is (its cancels still bar the lists begun before they settled), and so is what
   * each view ruled out, since the write may have changed what decided it too.
   */
  barrier(): void {
    for (const story of [...this.#stories.values()]) this.#forget(story);
    for (const choices of this.#choices.values()) {
      this.#bytes -= choices.bytes;
      this.account?.give(choices.bytes);
    }
    this.#choices.clear();
  }

  /** Whether the story holds as many operations as one may: then it is forgotten, and true. */
  #full(story: Story): boolean {
    if (story.operations.length < MAX_STORY_OPERATIONS) return false;
    this.#forget(story);
    this.capped = true;
    return true;
  }

  #addList(
    story: Story,
    digest: string | undefined,
    sentAt: number,
    answeredAt: number,
    at: ExchangeRef,
  ): void {
    const shown = new Map<string, number>();
    if (digest !== undefined) shown.set(story.orderId, this.#record(story, digest));
    this.#add(story, { op: "list", client: at.seq, sentAt, answeredAt, status: 200, shown }, at);
    story.lastList = story.operations.length - 1;
  }

  /**
   * Checks the stories that grew; when one narrows its view's choices, every story of the view that passed
   * only under combinations now ruled out is judged again under what is left.
   */
  #checkInView(view: string, grown: readonly Story[]): StoryChecked[] {
    const left = () => this.#choices.get(view)?.possible ?? ALL_RUN_CHOICES;
    let judgedUnder = left();
    const checked = grown.map((story) => this.#check(story));
    // Each turn follows a narrowing, and a view's choices narrow at most three times.
    while (left() !== judgedUnder) {
      const possible = left();
      judgedUnder = possible;
      for (const story of [...(this.#byView.get(view)?.values() ?? [])])
        if (!story.passing.some((choices) => possible.includes(choices))) checked.push(this.#check(story));
    }
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

  #begin(key: string, view: string, orderId: string, before: ListSeen | undefined): Story {
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
      settledAt: Number.NEGATIVE_INFINITY,
      passing: [],
      provisional: false,
      forgottenUntil: this.#forgotten.until(view, orderId),
      earliestSentAt: Number.POSITIVE_INFINITY,
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
    const digest = before?.index.recordDigest(orderId);
    const reliable = before !== undefined && before.at.startedAt > story.forgottenUntil;
    this.#forgotten.begun(view, orderId);
    if (before !== undefined && digest !== undefined && reliable) {
      const { sentAt, answeredAt } = this.#instants(before.at);
      this.#addList(story, digest, sentAt, answeredAt, before.at);
    }
    return story;
  }

  #add(story: Story, operation: HistoryOperation, at: ExchangeRef): void {
    story.operations.push(operation);
    story.earliestSentAt = Math.min(story.earliestSentAt, operation.sentAt);
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
    this.#taken += bytes;
    this.account?.take(bytes);
  }

  #chargeChoices(choices: ViewChoices, bytes: number): void {
    choices.bytes += bytes;
    this.#bytes += bytes;
    this.#taken += bytes;
    this.account?.take(bytes);
  }

  /**
   * Checks the story against the model under its view's choices left, and narrows them to those that
   * explain it; a story with a finding is forgotten, so the next one starts anew.
   */
  #check(story: Story): StoryChecked {
    const { history, refs } = this.#judged(story);
    const choices = this.#choices.get(story.view);
    const verdict = checkStory(story.orderId, history, choices?.possible ?? ALL_RUN_CHOICES);
    if (verdict.consistentChoices.length > 0) this.#narrow(story, history, refs, verdict.consistentChoices);
    story.passing = verdict.ok ? verdict.choices : [];
    story.provisional = this.#inFlight(story.orderId);
    const shownElsewhere = verdict.ok ? [] : (choices?.shownElsewhere(story.orderId, history, refs) ?? []);
    const findings = verdict.findings.map((finding) =>
      this.#storyFinding(story, history, refs, finding, shownElsewhere),
    );
    if (findings.length > 0) this.#forget(story);
    return { orderId: story.orderId, findings };
  }

  /**
   * The story as the model judges it: with a cancel of the order still in flight, or one of a forgotten
   * story that may have taken effect after the story's earliest operation began, one more cancel with no
   * answer, sent when the proxy began, which may take effect at any moment or never. It stands for every
   * such cancel, wherever it was sent: what passes with it passes whatever they do.
   */
  #judged(story: Story): { history: History; refs: readonly ExchangeRef[] } {
    const given = { pending: [], shipped: [], missing: [], unknown: [story.orderId] };
    const inFlight = this.#inFlight(story.orderId);
    if (!inFlight && story.earliestSentAt >= story.forgottenUntil)
      return { history: { given, records: story.records, operations: story.operations }, refs: story.refs };
    const last = story.refs[story.refs.length - 1] as ExchangeRef;
    const standIn: HistoryOperation = {
      op: "cancel",
      client: -1,
      orderId: story.orderId,
      sentAt: 0,
      answeredAt: null,
      status: null,
    };
    const which = inFlight ? `still in flight at ${last.label}` : "the window forgot";
    const ref = { ...last, label: `a cancel of order ${story.orderId} ${which}` };
    return {
      history: { given, records: story.records, operations: [...story.operations, standIn] },
      refs: [...story.refs, ref],
    };
  }

  #narrow(
    story: Story,
    history: History,
    refs: readonly ExchangeRef[],
    consistent: HistoryVerdict["consistentChoices"],
  ): void {
    let choices = this.#choices.get(story.view);
    const fresh = choices === undefined;
    choices ??= new ViewChoices();
    const ruledOut = choices.narrow(consistent, story.orderId, history, refs);
    if (ruledOut.length === 0) return;
    if (fresh) {
      this.#choices.set(story.view, choices);
      this.#chargeChoices(choices, VIEW_CHOICES_BYTES + story.view.length * 2);
    }
    for (const ruled of ruledOut)
      this.#chargeChoices(choices, RULED_OUT_BYTES + (ruled.orderId.length + ruled.at.label.length) * 2);
  }

  /**
   * A finding in the proxy's words, by the exchanges it names; when a choice the view ruled out would
   * explain the story, where the deployment showed otherwise, and that exchange as the earlier one.
   */
  #storyFinding(
    story: Story,
    history: History,
    storyRefs: readonly ExchangeRef[],
    finding: HistoryFinding,
    shownElsewhere: readonly ChoiceRuledOut[],
  ): StoryFinding {
    const refs = finding.operations.map((index) => storyRefs[index] as ExchangeRef);
    const message = storyFindingWords(finding, history, storyRefs);
    // The exchanges that were answered: a cancel in flight has none of its own yet.
    const answered = finding.operations
      .filter((index) => index < story.refs.length)
      .map((index) => storyRefs[index] as ExchangeRef);
    const earlier = (answered[0] ?? refs[0]) as ExchangeRef;
    const later = (answered[answered.length - 1] ?? refs[refs.length - 1]) as ExchangeRef;
    const shown = shownElsewhere[0];
    if (shown === undefined) return { rule: finding.rule, orderId: story.orderId, message, earlier, later };
    return {
      rule: finding.rule,
      orderId: story.orderId,
      message: `${message}; ${describeShownElsewhere(shownElsewhere)}`,
      earlier: shown.at.seq < later.seq ? shown.at : later,
      later: shown.at.seq < later.seq ? later : shown.at,
    };
  }

  #forget(story: Story): void {
    // Nor may a list the story held start the next one: a finding may have flagged it.
    const lastSent = story.operations.reduce((latest, operation) => Math.max(latest, operation.sentAt), 0);
    const until = Math.max(story.settledAt, lastSent, story.forgottenUntil);
    this.#forgotten.forgot(story.view, story.orderId, until);
    this.#stories.delete(story.key);
    const stories = this.#byView.get(story.view);
    stories?.delete(story.orderId);
    if (stories?.size === 0) this.#byView.delete(story.view);
    this.#bytes -= story.bytes;
    this.account?.give(story.bytes);
  }

  #over(): boolean {
    return this.#bytes > this.maxBytes;
  }

  /**
   * Forgets the oldest stories, then the oldest views' choices, then which orders' stories were forgotten
   * (keeping one instant for all), until within the budget. Past the account's limit it gives back what is
   * over, at most what this event took: another holder's overshoot is not the history's to make up. The
   * account's reclaim (the state keeper's) lets kept lists go before stories.
   */
  #keepWithinBudget(): void {
    while (this.#over() && this.#stories.size + this.#choices.size > 0) this.forgetOldest(1);
    if (this.#over()) this.#forgotten.forgetEntries();
    const taken = this.#taken;
    this.#taken = 0;
    const account = this.account;
    if (account === undefined) return;
    const due = Math.min(account.held - account.limit, taken);
    if (due <= 0) return;
    if (account.reclaim) account.reclaim(due);
    else this.forgetOldest(due);
  }

  /**
   * Forgets the oldest stories, then the oldest views' choices, until `bytes` are given back or nothing is
   * left, then which orders' stories were forgotten (keeping one instant for all); says the window was
   * cut. Choices go late: they are small, and what the deployment decided.
   */
  forgetOldest(bytes: number): void {
    let given = 0;
    for (const story of this.#stories.values()) {
      if (given >= bytes) return;
      given += story.bytes;
      this.#forget(story);
      this.cut = true;
    }
    for (const [view, choices] of this.#choices) {
      if (given >= bytes) return;
      given += choices.bytes;
      this.#choices.delete(view);
      this.#bytes -= choices.bytes;
      this.account?.give(choices.bytes);
      this.cut = true;
    }
    if (given < bytes) this.#forgotten.forgetEntries();
  }

  /** Bytes the stories and the views' choices hold, for the bounds' tests. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Stories kept, for the bounds' tests. */
  get stories(): number {
    return this.#stories.size;
  }

  /** The open choices a view has not ruled out, for the tests. */
  choicesOf(view: string): ViewChoices["possible"] {
    return this.#choices.get(view)?.possible ?? ALL_RUN_CHOICES;
  }
}
