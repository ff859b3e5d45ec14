import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { builtInContract } from "../../contract/built-in.ts";
import { judgeListBody } from "../judging/list-judge.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";
import type { OrderIndex } from "../judging/order-index.ts";
import { LiveHistory, MAX_STORY_OPERATIONS, type StoryChecked } from "../proxy/state-rules/live-history.ts";
import type { ExchangeRef } from "../proxy/state-rules/traffic-rule.ts";
import { RECORDS_KEPT_UP_TO, type StateFinding, TrafficState } from "../proxy/state-rules.ts";

/** An exchange from `startedAt` to `endedAt`, as the proxy times it. */
const at = (seq: number, startedAt: number, endedAt: number): ExchangeRef => ({
  seq,
  label: `#${seq}`,
  startedAt,
  endedAt,
});

/** Exchanges one after the other, each over before the next begins. */
const next = (seq: number) => at(seq, seq * 10, seq * 10 + 5);

/** A list of these orders (id, and a quantity that stands for the rest of the record) as the judge keeps it. */
function listed(orders: ReadonlyArray<number | [number, number]>): OrderIndex {
  const records = orders.map((order) =>
    typeof order === "number" ? { id: order, quantity: 1 } : { id: order[0], quantity: order[1] },
  );
  return judgeListBody(Buffer.from(JSON.stringify(records)), {
    validateOrder: builtInContract().schema("Order"),
    keepRecordsUpTo: RECORDS_KEPT_UP_TO,
  }).orders;
}

const findingsOf = (checked: readonly StoryChecked[]) => checked.flatMap((story) => story.findings);

describe("the proxy's live history, checked against the spec's model", () => {
  it("flags two 204s for one order answered under concurrency, in the words cancel-once's traffic rule uses", () => {
    const history = new LiveHistory();
    assert.deepEqual(findingsOf(history.cancel("k", "5", 204, at(1, 0, 30))), []);
    const [finding, ...more] = findingsOf(history.cancel("k", "5", 204, at(2, 10, 40)));
    assert.deepEqual(more, []);
    assert.equal(finding?.rule, "cancel-once");
    assert.equal(finding?.message, "order 5 was cancelled twice: #1 (0–30 ms), #2 (10–40 ms)");
    assert.deepEqual([finding?.earlier.seq, finding?.later.seq], [1, 2]);
  });

  it("flags an order that comes back after its cancel took it out of the list", () => {
    const history = new LiveHistory();
    history.cancel("k", "5", 204, next(1));
    assert.deepEqual(findingsOf(history.list("k", listed([6]), next(2))), []);
    const [finding] = findingsOf(history.list("k", listed([5, 6]), next(3)));
    assert.equal(finding?.rule, "stale-read");
    assert.match(
      finding?.message ?? "",
      /^order 5 was listed as it was before a cancel of it was answered \(at least 15 ms stale\): #1 \(10–15 ms\), #3, listing it \(30–35 ms\)$/,
    );
  });

  it("flags a record a cancel changed", () => {
    const history = new LiveHistory();
    history.list("k", listed([5]), next(1));
    history.cancel("k", "5", 204, next(2));
    assert.deepEqual(findingsOf(history.list("k", listed([5]), next(3))), []);
    assert.deepEqual(
      findingsOf(history.list("k", listed([[5, 2]]), next(4))).map((finding) => finding.rule),
      ["cancel-leaves-fields"],
    );
  });

  it("finds nothing in a service that keeps the spec, whichever way it decides what the spec leaves open", () => {
    for (const [listedAfter, second] of [
      [true, 409],
      [false, 404],
      [false, 409],
    ] as const) {
      const history = new LiveHistory();
      const shown = listedAfter ? [5, 6] : [6];
      const checked = [
        ...history.cancel("k", "6", 409, next(1)),
        ...history.list("k", listed([5, 6]), at(2, 15, 60)),
        ...history.cancel("k", "5", 204, at(3, 20, 30)),
        ...history.cancel("k", "5", second, next(7)),
        ...history.list("k", listed(shown), next(8)),
        ...history.cancel("k", "7", 404, next(9)),
        ...history.list("k", listed(shown), next(10)),
      ];
      assert.deepEqual(findingsOf(checked), [], `listed: ${listedAfter}, second cancel: ${second}`);
      assert.ok(checked.length > 0);
    }
  });

  it("starts an order first seen mid-window in an unknown state", () => {
    const history = new LiveHistory();
    // A 409 first: the order may have been shipped, or cancelled before the window began.
    const checked = [
      ...history.cancel("k", "5", 409, next(1)),
      ...history.list("k", listed([5]), next(2)),
      ...history.cancel("k", "5", 409, next(3)),
    ];
    assert.deepEqual(findingsOf(checked), []);
  });

  it("keeps each view apart", () => {
    const history = new LiveHistory();
    history.cancel("a", "5", 204, at(1, 0, 30));
    assert.deepEqual(findingsOf(history.cancel("b", "5", 204, at(2, 10, 40))), []);
  });

  it("keeps no list that says nothing new of an order", () => {
    const history = new LiveHistory();
    history.cancel("k", "5", 204, next(1));
    history.list("k", listed([6]), next(2));
    const held = history.bytes;
    for (let seq = 3; seq < 1000; seq++)
      assert.deepEqual(findingsOf(history.list("k", listed([6]), next(seq))), []);
    assert.equal(history.bytes, held);
    assert.equal(findingsOf(history.list("k", listed([5, 6]), next(1000)))[0]?.rule, "stale-read");
  });

  it("charges what it keeps to the account and forgets the oldest orders first, saying the window was cut", () => {
    const account = new MemoryBudget(1024 * 1024);
    const history = new LiveHistory(4096, account);
    for (let order = 1; order <= 100; order++) history.cancel("k", String(order), 204, next(order));
    assert.equal(account.held, history.bytes);
    assert.ok(history.bytes <= 4096);
    assert.ok(history.stories < 100);
    assert.equal(history.cut, true);
    // Order 1's story was forgotten: its next cancel starts a new one, in an unknown state.
    assert.deepEqual(findingsOf(history.cancel("k", "1", 204, next(101))), []);
    assert.equal(findingsOf(history.cancel("k", "100", 204, next(102)))[0]?.rule, "cancel-once");
    history.forgetOldest(Number.POSITIVE_INFINITY);
    assert.equal(account.held, 0);
  });

  it("holds at most MAX_STORY_OPERATIONS operations of one order, and no false alarm follows its forgetting", () => {
    const history = new LiveHistory();
    // A correct store: order 5 cancelled once, then cancelled again and again (404), listed no more.
    assert.deepEqual(findingsOf(history.cancel("k", "5", 204, next(1))), []);
    for (let seq = 2; seq < 4 * MAX_STORY_OPERATIONS; seq++) {
      const checked =
        seq % 7 === 0 ? history.list("k", listed([6]), next(seq)) : history.cancel("k", "5", 404, next(seq));
      assert.deepEqual(findingsOf(checked), [], `at #${seq}`);
    }
    assert.equal(history.capped, true);
    assert.ok(history.bytes < 80 * MAX_STORY_OPERATIONS * 4, `${history.bytes} bytes`);
  });

  it("forgets an order's story once it was flagged, so one defect is reported once", () => {
    const history = new LiveHistory();
    history.cancel("k", "5", 204, next(1));
    assert.equal(findingsOf(history.cancel("k", "5", 204, next(2))).length, 1);
    assert.deepEqual(findingsOf(history.list("k", listed([6]), next(3))), []);
    assert.equal(history.stories, 0);
  });

  it("never flags sequential traffic that the model gives", () => {
    const operation = fc.oneof(
      fc.record({ op: fc.constant("cancel" as const), order: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ op: fc.constant("list" as const) }),
    );
    fc.assert(
      fc.property(
        fc.array(operation, { maxLength: 30 }),
        fc.boolean(),
        fc.boolean(),
        (ops, keepListed, gone) => {
          const history = new LiveHistory();
          const status = new Map([
            [1, "pending"],
            [2, "pending"],
            [3, "shipped"],
          ]);
          const found: StoryChecked[] = [];
          ops.forEach((step, seq) => {
            if (step.op === "list") {
              const shown = [...status].filter(([, state]) => state !== "cancelled" || keepListed);
              found.push(...history.list("k", listed(shown.map(([id]) => id)), next(seq)));
              return;
            }
            const state = status.get(step.order);
            const answer = state === "pending" ? 204 : state === "shipped" ? 409 : gone ? 404 : 409;
            if (state === "pending") status.set(step.order, "cancelled");
            found.push(...history.cancel("k", String(step.order), answer, next(seq)));
          });
          assert.deepEqual(findingsOf(found), []);
        },
      ),
    );
  });
});

describe("the open choices, decided once per view as explore decides them per run", () => {
  it("flags a second cancel answered 404 where another order's was 409, naming both orders' exchanges", () => {
    const history = new LiveHistory();
    history.cancel("k", "5", 204, next(1));
    assert.deepEqual(findingsOf(history.cancel("k", "5", 409, next(2))), []);
    history.cancel("k", "6", 204, next(3));
    const [finding, ...more] = findingsOf(history.cancel("k", "6", 404, next(4)));
    assert.deepEqual(more, []);
    assert.equal(finding?.rule, "cancel-answer-matches-state");
    assert.equal(
      finding?.message,
      "order 6 got answers that no state of it explains, in any order the traffic allows: #4 (40–45 ms); " +
        "this deployment showed a second cancel answers 409 for order 5 at exchange #2",
    );
    assert.deepEqual([finding?.earlier.seq, finding?.later.seq], [2, 4]);
  });

  it("flags a cancelled order still listed once another order of the view left the list when cancelled", () => {
    const history = new LiveHistory();
    history.cancel("k", "5", 204, next(1));
    history.cancel("k", "6", 204, next(2));
    // Both stories checked by one list: order 6 leaving the list decides the choice, and order 5 is judged again.
    const [finding, ...more] = findingsOf(history.list("k", listed([5]), next(3)));
    assert.deepEqual(more, []);
    assert.equal(finding?.rule, "stale-read");
    assert.match(
      finding?.message ?? "",
      /^order 5 was listed as it was before a cancel of it was answered \(at least 15 ms stale\): .*; this deployment showed cancelled orders leave the list for order 6 at exchange #3$/,
    );
    assert.equal(history.choicesOf("k").length, 2);
  });

  it("judges the view's kept stories again when a later order decides a choice", () => {
    const history = new LiveHistory();
    history.cancel("k", "5", 204, next(1));
    // Order 5 listed after its cancel fits either choice (staying listed, or a stale read): it decides nothing.
    assert.deepEqual(findingsOf(history.list("k", listed([5, 6]), next(2))), []);
    assert.equal(history.choicesOf("k").length, 4);
    history.cancel("k", "6", 204, next(3));
    // This list says nothing new of order 5; order 6 leaving it decides the choice, and order 5's story is judged again.
    const [finding, ...more] = findingsOf(history.list("k", listed([5]), next(4)));
    assert.deepEqual(more, []);
    assert.equal(finding?.orderId, "5");
    assert.match(
      finding?.message ?? "",
      /^order 5 was listed as it was before a cancel of it was answered \(at least 5 ms stale\): #1 \(10–15 ms\), #2, listing it \(20–25 ms\); this deployment showed cancelled orders leave the list for order 6 at exchange #4$/,
    );
    assert.deepEqual([finding?.earlier.seq, finding?.later.seq], [2, 4]);
  });

  it("judges again only the stories that passed under nothing left", () => {
    const history = new LiveHistory();
    for (let order = 1; order <= 50; order++) history.cancel("k", String(order), 204, next(order));
    history.list("k", listed(Array.from({ length: 50 }, (_, index) => index + 1)), next(51));
    history.cancel("k", "99", 204, next(52));
    // Cancelled orders still listed pass whatever a second cancel answers: deciding that judges none again.
    assert.deepEqual(
      history.cancel("k", "99", 409, next(53)).map((checked) => checked.orderId),
      ["99"],
    );
    assert.equal(history.choicesOf("k").length, 2);
  });

  it("keeps each view's choices apart", () => {
    const history = new LiveHistory();
    history.cancel("a", "5", 204, next(1));
    history.cancel("a", "5", 409, next(2));
    history.cancel("b", "6", 204, next(3));
    assert.deepEqual(findingsOf(history.cancel("b", "6", 404, next(4))), []);
    assert.deepEqual(
      history.choicesOf("a").map((choices) => choices.secondCancelStatus),
      [409, 409],
    );
    assert.deepEqual(
      history.choicesOf("b").map((choices) => choices.secondCancelStatus),
      [404, 404],
    );
  });

  it("reads a 404 for an order never listed as an absent order, which decides nothing", () => {
    const history = new LiveHistory();
    history.cancel("k", "5", 204, next(1));
    history.cancel("k", "5", 409, next(2));
    assert.deepEqual(findingsOf(history.cancel("k", "7", 404, next(3))), []);
    assert.deepEqual(findingsOf(history.list("k", listed([5]), next(4))), []);
  });

  it("charges the choices ruled out and forgets them after every story, then which stories it forgot", () => {
    const account = new MemoryBudget(1024 * 1024);
    const history = new LiveHistory(undefined, account);
    history.cancel("k", "5", 204, next(1));
    history.cancel("k", "5", 409, next(2));
    assert.equal(account.held, history.bytes);
    history.cancel("k", "6", 204, next(3));
    const withStories = history.bytes;
    history.forgetOldest(1);
    history.forgetOldest(1);
    assert.equal(history.stories, 0);
    assert.ok(history.bytes > 0 && history.bytes < withStories, "the view's choices outlive its stories");
    assert.equal(history.choicesOf("k").length, 2);
    history.forgetOldest(1);
    assert.equal(history.choicesOf("k").length, 4);
    assert.ok(history.bytes > 0, "which orders' stories were forgotten outlives the choices");
    assert.equal(account.held, history.bytes);
    history.forgetOldest(1);
    assert.equal(history.bytes, 0);
    assert.equal(account.held, 0);
  });

  it("never crashes on a deployment that decides per order, and flags only orders the view's choices cannot explain", () => {
    const decision = fc.record({ listed: fc.boolean(), second: fc.constantFrom(404, 409) });
    fc.assert(
      fc.property(fc.array(decision, { minLength: 1, maxLength: 6 }), fc.boolean(), (orders, listFirst) => {
        const history = new LiveHistory();
        let seq = 1;
        const found: StoryChecked[] = [];
        const cancelOf = (order: number) => {
          found.push(...history.cancel("k", String(order + 1), 204, next(seq++)));
          found.push(...history.cancel("k", String(order + 1), orders[order]?.second ?? 409, next(seq++)));
        };
        const listAll = () => {
          const shown = orders.flatMap((order, index) => (order.listed ? [index + 1] : []));
          found.push(...history.list("k", listed(shown), next(seq++)));
        };
        orders.forEach((_, index) => {
          cancelOf(index);
          if (listFirst) listAll();
        });
        listAll();
        const differ = (key: "listed" | "second") => new Set(orders.map((order) => order[key])).size > 1;
        assert.equal(findingsOf(found).length > 0, differ("listed") || differ("second"));
      }),
    );
  });
});

describe("the latest list before an order's first cancel", () => {
  it("starts the order's story, so a record changed across the first cancel is flagged", () => {
    const history = new LiveHistory();
    const before = { index: listed([5]), at: next(1) };
    assert.deepEqual(findingsOf(history.cancel("k", "5", 204, next(2), before)), []);
    const [finding] = findingsOf(history.list("k", listed([[5, 2]]), next(3)));
    assert.equal(finding?.rule, "cancel-leaves-fields");
    assert.deepEqual([finding?.earlier.seq, finding?.later.seq], [1, 3]);
  });

  it("starts the order's story, in which a record changed across a 409 is the order's shipping", () => {
    const history = new LiveHistory();
    const before = { index: listed([5]), at: next(1) };
    assert.deepEqual(findingsOf(history.cancel("k", "5", 409, next(2), before)), []);
    assert.deepEqual(findingsOf(history.list("k", listed([[5, 2]]), next(3))), []);
    // Shipped once: another record after that is a change no shipping explains.
    const [finding] = findingsOf(history.list("k", listed([[5, 3]]), next(4)));
    assert.equal(finding?.rule, "cancel-leaves-fields");
  });

  it("starts the order's story, so an order that vanished after a 409 is flagged", () => {
    const history = new LiveHistory();
    const before = { index: listed([5]), at: next(1) };
    history.cancel("k", "5", 409, next(2), before);
    assert.equal(findingsOf(history.list("k", listed([]), next(3))).length, 1);
  });

  it("adds nothing for an order the list did not show: it may have been placed since", () => {
    const history = new LiveHistory();
    const held = new LiveHistory();
    history.cancel("k", "5", 204, next(2), { index: listed([6]), at: next(1) });
    held.cancel("k", "5", 204, next(2));
    assert.equal(history.bytes, held.bytes);
  });
});

describe("the live history in the state keeper", () => {
  const cancel = (state: TrafficState, orderId: string, ref: ExchangeRef): StateFinding[] =>
    state.observe({ kind: "cancel", view: "k", session: "", orderId, status: 204, at: ref });

  it("reports a double 204 once, in one phrasing", () => {
    const state = new TrafficState();
    cancel(state, "5", at(1, 0, 30));
    const findings = cancel(state, "5", at(2, 10, 40));
    assert.deepEqual(
      findings.map((finding) => finding.rule),
      ["cancel-once"],
    );
    assert.match(
      findings[0]?.message ?? "",
      /^order 5 was cancelled twice: #1 \(0–30 ms\), #2 \(10–40 ms\)$/,
    );
  });

  it("words one rule one way, whether the traffic rule or the model found it, by exchange numbers", () => {
    const state = new TrafficState();
    // One after another: the model flags the story's first two, then a new story starts and the rule flags
    // the third against the first, then the model flags the third and fourth.
    const findings = [1, 2, 3, 4].flatMap((seq) => cancel(state, "5", at(seq, seq * 10, seq * 10 + 5)));
    assert.ok(findings.length >= 3, JSON.stringify(findings));
    for (const finding of findings) {
      assert.equal(finding.rule, "cancel-once");
      assert.match(finding.message, /^order 5 was cancelled twice: #\d \(\d+–\d+ ms\), #\d \(\d+–\d+ ms\)$/);
    }
  });

  it("leaves out a finding of the model for an order the traffic rules flagged under another rule", () => {
    const state = new TrafficState();
    state.observe({ kind: "cancel", view: "k", session: "", orderId: "5", status: 409, at: next(1) });
    const findings = cancel(state, "5", next(2));
    assert.equal(findings.length, 1);
    assert.equal(findings[0]?.rule, "no-cancel-after-conflict");
  });

  it("reports what only the model finds under the model's rules, and counts their tests", () => {
    const state = new TrafficState();
    const list = (ids: number[], seq: number) =>
      state.observe({
        kind: "list",
        view: "k",
        session: "",
        orders: () => ({ index: listed(ids) }),
        at: next(seq),
      });
    list([5, 6], 1);
    cancel(state, "5", next(2));
    assert.deepEqual(list([6], 3), []);
    const findings = list([5, 6], 4);
    assert.deepEqual(
      findings.map((finding) => finding.rule),
      ["stale-read"],
    );
    assert.match(
      findings[0]?.message ?? "",
      /^order 5 was listed as it was before a cancel of it was answered \(at least 15 ms stale\): #2 \(20–25 ms\), #4, listing it \(40–45 ms\)$/,
    );
    assert.ok(state.evaluations["stale-read"] >= 3);
    assert.equal(state.evaluations["cancel-answer-matches-state"], state.evaluations["stale-read"]);
  });

  it("judges an order across its first cancel with a list that overlapped it, which the lists' rules cannot", () => {
    const state = new TrafficState();
    const list = (orders: Array<[number, number]>, ref: ExchangeRef) =>
      state.observe({
        kind: "list",
        view: "k",
        session: "",
        orders: () => ({ index: listed(orders) }),
        at: ref,
      });
    // The first list was still being answered when the cancel began: the lists' rules cannot put the cancel between them.
    assert.deepEqual(list([[5, 1]], at(1, 0, 12)), []);
    assert.deepEqual(cancel(state, "5", at(2, 10, 15)), []);
    const findings = list([[5, 2]], at(3, 20, 25));
    assert.deepEqual(
      findings.map((finding) => finding.rule),
      ["cancel-leaves-fields"],
    );
    assert.match(
      findings[0]?.message ?? "",
      /^order 5 changed when it was cancelled: #1, listing it \(0–12 ms\), #3, listing it \(20–25 ms\)$/,
    );
  });

  it("keeps its stories while another holder has the account past its limit", () => {
    const account = new MemoryBudget(1024 * 1024);
    const state = new TrafficState({}, account);
    const list = (ids: number[], seq: number) =>
      state.observe({
        kind: "list",
        view: "k",
        session: "",
        orders: () => ({ index: listed(ids) }),
        at: next(seq),
      });
    const ids = Array.from({ length: 100 }, (_, index) => index + 1);
    list(ids, 1);
    cancel(state, "1", next(2));
    // A held answer's backlog takes past the limit, as it may (takeAnyway), while a list goes by: what the
    // list's story grew by is made up for by the kept list, and order 1's story stays.
    const other = account.limit - account.held + 1;
    account.take(other);
    assert.deepEqual(list(ids.slice(1), 3), []);
    account.give(other);
    assert.deepEqual(
      list(ids, 4).map((finding) => finding.rule),
      ["stale-read"],
    );
  });

  it("gives back no more than it took when over the account's limit", () => {
    const account = new MemoryBudget(1024 * 1024);
    const history = new LiveHistory(undefined, account);
    for (let order = 1; order <= 50; order++) history.cancel("k", String(order), 204, next(order));
    const stories = history.stories;
    // Another holder is over by more than the whole history holds: that is not the history's to make up.
    account.take(account.limit - account.held + 64 * 1024);
    history.cancel("k", "51", 204, next(51));
    assert.ok(history.stories >= stories - 2, `${history.stories} of ${stories + 1} stories kept`);
    assert.equal(history.cut, true);
  });

  it("says so when an order's story grew too long to keep", () => {
    const state = new TrafficState();
    for (let seq = 1; seq <= 2 * MAX_STORY_OPERATIONS; seq++)
      assert.deepEqual(
        state.observe({ kind: "cancel", view: "k", session: "", orderId: "7", status: 409, at: next(seq) }),
        [],
      );
    assert.match(state.notes.get("history-story-capped")?.message ?? "", /reached 256 operations/);
  });

  it("says so when the live history's window was cut", () => {
    const state = new TrafficState({ historyBytes: 0 });
    cancel(state, "5", next(1));
    assert.match([...state.notes.values()][0]?.message ?? "", /live history .* was cut/);
  });
});

/** What a state keeper is told, as the proxy tells it: each exchange once it is over. */
class Traffic {
  readonly state = new TrafficState();
  readonly findings: StateFinding[] = [];
  /** Cancels sent and not yet answered, by order. */
  readonly #inFlight = new Map<string, number>();
  readonly cancelInFlight = (orderId: string) => (this.#inFlight.get(orderId) ?? 0) > 0;

  sent(orderId: string): void {
    this.#inFlight.set(orderId, (this.#inFlight.get(orderId) ?? 0) + 1);
  }

  cancel(orderId: string, status: number | null, ref: ExchangeRef): void {
    this.#inFlight.set(orderId, (this.#inFlight.get(orderId) ?? 1) - 1);
    const { cancelInFlight } = this;
    const event = {
      kind: "cancel",
      view: "k",
      session: "",
      orderId,
      status,
      cancelInFlight,
      at: ref,
    } as const;
    this.findings.push(...this.state.observe(event));
  }

  list(ids: readonly number[], ref: ExchangeRef): void {
    const orders = { index: listed(ids) };
    const { cancelInFlight } = this;
    const event = {
      kind: "list",
      view: "k",
      session: "",
      orders: () => orders,
      cancelInFlight,
      at: ref,
    } as const;
    this.findings.push(...this.state.observe(event));
  }

  get rules(): string[] {
    return this.findings.map((finding) => `${finding.rule}: ${finding.message}`);
  }
}

describe("a correct store under concurrency, as the proxy sees it", () => {
  it("narrows nothing from a 404 answered while the 204 of the same order is still in flight", () => {
    // Cancelled orders leave the list, a second cancel answers 404; the 404 comes back before the 204.
    const traffic = new Traffic();
    traffic.list([1, 2], at(1, 0, 5));
    traffic.sent("1");
    traffic.sent("1");
    traffic.cancel("1", 404, at(3, 11, 30));
    assert.equal(traffic.state.evaluations["stale-read"] > 0, true);
    traffic.cancel("1", 204, at(2, 10, 40));
    traffic.sent("2");
    traffic.cancel("2", 204, at(4, 50, 55));
    traffic.list([], at(5, 60, 65));
    assert.deepEqual(traffic.rules, []);
  });

  it("narrows nothing from a slow list and a 404 answered while the 204 is in flight", () => {
    // The 204 was sent at 0 and took effect at 20; the list read order 1 at 15; the 404 came at 25–30.
    const traffic = new Traffic();
    traffic.sent("1");
    traffic.sent("1");
    traffic.cancel("1", 404, at(3, 25, 30));
    traffic.list([1, 2], at(2, 10, 35));
    traffic.cancel("1", 204, at(1, 0, 100));
    traffic.sent("2");
    traffic.cancel("2", 204, at(4, 110, 115));
    traffic.list([], at(5, 120, 125));
    assert.deepEqual(traffic.rules, []);
  });

  for (const [answer, status] of [
    ["no answer", null],
    ["a 502", 502],
  ] as const)
    it(`reads a cancel with ${answer} as one that may have taken effect`, () => {
      const traffic = new Traffic();
      traffic.list([1, 2], next(1));
      traffic.sent("1");
      traffic.cancel("1", status, next(2));
      traffic.sent("1");
      traffic.cancel("1", 404, next(3));
      traffic.sent("2");
      traffic.cancel("2", 204, next(4));
      traffic.list([], next(5));
      assert.deepEqual(traffic.rules, []);
    });

  it("flags only the stale list when an order's next story would start from it", () => {
    const traffic = new Traffic();
    traffic.list([1, 2], next(1));
    traffic.cancel("1", 204, next(2));
    traffic.list([2], next(3));
    traffic.list([1, 2], next(4));
    traffic.cancel("1", 404, next(5));
    assert.deepEqual(
      traffic.findings.map((finding) => finding.rule),
      ["stale-read"],
    );
  });
});

describe("an undecided cancel in a story", () => {
  it("keeps no list polled again after it that says nothing new", () => {
    const history = new LiveHistory();
    history.cancel("k", "5", null, next(1));
    history.list("k", listed([5]), next(2));
    const bytes = history.bytes;
    for (let seq = 3; seq < 50; seq++)
      assert.deepEqual(findingsOf(history.list("k", listed([5]), next(seq))), []);
    assert.equal(history.bytes, bytes);
  });
});

describe("an order whose story was forgotten", () => {
  it("starts its next story from no list older than the cancels forgotten with it", () => {
    // Cancelled orders leave the list, a second cancel answers 404; a window that holds two stories.
    const history = new LiveHistory(1900);
    const before = { index: listed([1, 2, 3]), at: at(1, 0, 5) };
    history.cancel("k", "1", 204, at(2, 10, 15), before);
    history.cancel("k", "2", 204, at(3, 20, 25), before);
    history.cancel("k", "3", 204, at(4, 30, 35), before);
    assert.equal(history.cut, true, "order 1's story was forgotten");
    assert.deepEqual(findingsOf(history.cancel("k", "1", 404, at(5, 40, 45), before)), []);
    assert.equal(history.choicesOf("k").length, 4);
    assert.deepEqual(findingsOf(history.list("k", listed([]), at(6, 50, 55))), []);
  });

  it("starts its next story from a list begun after them", () => {
    const history = new LiveHistory(900);
    history.cancel("k", "1", 204, at(1, 0, 5));
    history.cancel("k", "2", 204, at(2, 10, 15));
    history.cancel("k", "3", 204, at(3, 20, 25));
    assert.equal(history.cut, true, "order 1's story was forgotten");
    const after = { index: listed([[1, 1]]), at: at(4, 30, 35) };
    // A 204, not a 409, so that no shipping outside the API explains the record that list #6 shows.
    history.cancel("k", "1", 204, at(5, 40, 45), after);
    const findings = findingsOf(history.list("k", listed([[1, 2]]), at(6, 50, 55)));
    assert.deepEqual(
      findings.map((finding) => finding.rule),
      ["cancel-leaves-fields"],
    );
  });

  it("judges its next story as if the forgotten cancels might take effect in it, when it began before them", () => {
    const history = new LiveHistory(900);
    // Order 1's 204 took effect at 35; a slow list read it at 25, still pending.
    history.cancel("k", "1", 204, at(1, 10, 40));
    history.cancel("k", "2", 204, at(2, 41, 42));
    history.cancel("k", "3", 204, at(3, 43, 44));
    assert.equal(history.cut, true, "order 1's story was forgotten");
    assert.deepEqual(findingsOf(history.cancel("k", "1", 404, at(4, 36, 50))), []);
    assert.deepEqual(findingsOf(history.list("k", listed([1, 2, 3]), at(5, 20, 60))), []);
    // The 404 decides what a second cancel answers, and nothing of whether cancelled orders stay listed.
    assert.deepEqual(
      history.choicesOf("k").map((choices) => choices.cancelledOrdersListed),
      [true, false],
    );
  });

  it("keeps what it remembers of forgotten orders within a share of the budget", () => {
    const account = new MemoryBudget(1024 * 1024);
    const history = new LiveHistory(16 * 1024, account);
    for (let order = 1; order <= 2000; order++) history.cancel("k", String(order), 204, next(order));
    assert.ok(history.bytes <= 16 * 1024, `${history.bytes} bytes`);
    assert.equal(account.held, history.bytes);
    // Every order forgotten counts as forgotten: the list older than the cancels starts no story.
    const old = { index: listed([1]), at: next(0) };
    assert.deepEqual(findingsOf(history.cancel("k", "1", 404, next(2001), old)), []);
  });
});

describe("the live history of a correct store under concurrent traffic", () => {
  /** A request of the traffic: when it was sent, when it took effect (or read the store), when it was over. */
  const request = fc.record({
    kind: fc.constantFrom("list", "cancel", "cancel"),
    order: fc.integer({ min: 1, max: 3 }),
    sentAt: fc.integer({ min: 0, max: 100 }),
    effectAfter: fc.integer({ min: 0, max: 20 }),
    answerAfter: fc.integer({ min: 0, max: 20 }),
    /** A cancel whose answer is lost or is a 502: whether it took effect all the same. */
    undecided: fc.constantFrom(undefined, undefined, undefined, "lost", "502"),
    tookEffect: fc.boolean(),
  });
  const store = fc.record({
    listed: fc.boolean(),
    second: fc.constantFrom(404, 409),
    statuses: fc.array(fc.constantFrom("pending", "pending", "shipped", "cancelled"), {
      minLength: 3,
      maxLength: 3,
    }),
  });

  it("finds nothing, with answers arriving out of order and some cancels undecided", () => {
    fc.assert(
      fc.property(store, fc.array(request, { minLength: 1, maxLength: 16 }), (deployment, requests) => {
        const traffic = new Traffic();
        const status = new Map(deployment.statuses.map((each, index) => [index + 1, each]));
        const timed = requests.map((each, seq) => ({
          ...each,
          seq: seq + 1,
          effectAt: each.sentAt + each.effectAfter,
          endedAt: each.sentAt + each.effectAfter + each.answerAfter,
          answer: null as number | null,
          shown: [] as number[],
        }));
        // The store applies each request at its moment, one at a time.
        for (const each of [...timed].sort((a, b) => a.effectAt - b.effectAt)) {
          if (each.kind === "list") {
            each.shown = [...status]
              .filter(([, was]) => was !== "cancelled" || deployment.listed)
              .map(([id]) => id);
            continue;
          }
          const was = status.get(each.order);
          const effect = each.undecided === undefined || each.tookEffect;
          if (effect && was === "pending") status.set(each.order, "cancelled");
          each.answer = was === "pending" ? 204 : was === "shipped" ? 409 : deployment.second;
          if (each.undecided === "lost") each.answer = null;
          if (each.undecided === "502") each.answer = 502;
        }
        // The proxy sees each request come in, and each answer once it is over, in the order they end. At
        // one instant, answers come before requests, except a request's own answer, which follows it.
        const rank = (event: { begins: boolean; each: (typeof timed)[number] }) =>
          event.begins ? 1 : event.each.sentAt === event.each.endedAt ? 2 : 0;
        const events = timed.flatMap((each) => [
          { at: each.sentAt, begins: true, each },
          { at: each.endedAt, begins: false, each },
        ]);
        events.sort((a, b) => a.at - b.at || rank(a) - rank(b));
        for (const { begins, each } of events) {
          const ref = at(each.seq, each.sentAt, each.endedAt);
          if (each.kind === "list") {
            if (!begins) traffic.list(each.shown, ref);
          } else if (begins) traffic.sent(String(each.order));
          else traffic.cancel(String(each.order), each.answer, ref);
        }
        assert.deepEqual(traffic.rules, []);
      }),
      { numRuns: 400 },
    );
  });
});
