import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { builtInContract } from "../../contract/built-in.ts";
import { judgeListBody } from "../judging/list-judge.ts";
import { WRITE_OUTSIDE_CONTRACT_IN_FLIGHT } from "../proxy/state-rules/barrier.ts";
import {
  type ExchangeRef,
  type ListedOrders,
  RECORDS_KEPT_UP_TO,
  type StateEvent,
  TrafficState,
} from "../proxy/state-rules.ts";

// Exchanges one after the other, each over before the next begins.
const at = (seq: number): ExchangeRef => ({
  seq,
  label: `#${seq}`,
  startedAt: seq * 10,
  endedAt: seq * 10 + 5,
});

/** A list of these orders (id and a quantity that stands for the rest of the record) as the judge keeps it. */
function listed(orders: ReadonlyArray<readonly [number, number]>): ListedOrders {
  const body = JSON.stringify(orders.map(([id, quantity]) => ({ id, quantity })));
  const verdict = judgeListBody(Buffer.from(body), {
    validateOrder: builtInContract().schema("Order"),
    keepRecordsUpTo: RECORDS_KEPT_UP_TO,
  });
  return { index: verdict.orders, records: verdict.records };
}

const listOf = (
  ids: readonly number[],
  ref: ExchangeRef,
  inFlight?: (key: string) => boolean,
): StateEvent => ({
  kind: "list",
  view: "k",
  session: "",
  bytes: Buffer.from(String(ids)),
  orders: () => listed(ids.map((id) => [id, 1] as const)),
  at: ref,
  ...(inFlight ? { cancelInFlight: inFlight } : {}),
});

const cancelOf = (orderId: string, status: number | null, ref: ExchangeRef): StateEvent => ({
  kind: "cancel",
  view: "k",
  session: "",
  orderId,
  status,
  at: ref,
});

const rulesOf = (findings: ReturnType<TrafficState["observe"]>) => findings.map((finding) => finding.rule);

describe("a write outside the contract is a barrier to the state rules", () => {
  it("forgets every order at it: a 204 after it is a new round, a list after it starts again", () => {
    const state = new TrafficState();
    state.observe(listOf([1, 2, 3], at(1)));
    state.observe(cancelOf("3", 204, at(2)));
    state.barrier(at(3), "#3 POST /__control/reset");
    assert.deepEqual(rulesOf(state.observe(listOf([1, 2], at(4)))), []);
    assert.deepEqual(rulesOf(state.observe(cancelOf("2", 204, at(5)))), []);
    assert.deepEqual(rulesOf(state.observe(cancelOf("2", 204, at(6)))), ["cancel-once"]);
    assert.match(
      state.notes.get("state-rules-restarted")?.message ?? "",
      /^the state rules started again after 1 write outside the contract \(first: #3 POST \/__control\/reset\): /,
    );
    state.barrier(at(7), "#7 PUT /__control/orders/2");
    assert.match(
      state.notes.get("state-rules-restarted")?.message ?? "",
      /^the state rules started again after 2 writes outside the contract \(first: #3 POST \/__control\/reset\)/,
    );
  });

  it("compares an exchange sent before a barrier's answer was over with nothing on either side", () => {
    const state = new TrafficState();
    state.observe(listOf([1, 2, 3], at(1)));
    // Sent while the barrier was on its way, answered after it: the upstream may have handled it either side.
    const barrier = { ...at(2), endedAt: 40 };
    state.barrier(barrier, "#2 POST /__control/reset");
    assert.deepEqual(rulesOf(state.observe(listOf([1], { ...at(3), startedAt: 30, endedAt: 45 }))), []);
    assert.deepEqual(
      rulesOf(state.observe(cancelOf("2", 204, { ...at(4), startedAt: 35, endedAt: 46 }))),
      [],
    );
    // Taken as a cancel that may have taken effect: order 2 leaving the list is no finding.
    state.observe(listOf([1, 2], at(5)));
    assert.deepEqual(rulesOf(state.observe(listOf([1], at(6)))), []);
    assert.deepEqual(rulesOf(state.observe(listOf([], at(7)))), ["listed-orders-stay"]);
  });

  it("compares an exchange answered while a write outside the contract is in flight with nothing", () => {
    const state = new TrafficState();
    state.observe(listOf([1, 2, 3], at(1)));
    const writing = (key: string) => key === WRITE_OUTSIDE_CONTRACT_IN_FLIGHT;
    assert.deepEqual(rulesOf(state.observe(listOf([1], at(2), writing))), []);
    // The write was refused (4xx): no barrier, and the list before it is still the one compared.
    assert.deepEqual(rulesOf(state.observe(listOf([1, 2], at(3)))), ["listed-orders-stay"]);
  });

  it("keeps a cancel whose effect is undecided across it: it may take effect after it too", () => {
    const state = new TrafficState();
    state.observe(listOf([1, 2], at(1)));
    state.observe(cancelOf("2", null, at(2)));
    state.barrier(at(3), "#3 POST /__control/reset");
    state.observe(listOf([1, 2], at(4)));
    assert.deepEqual(rulesOf(state.observe(listOf([1], at(5)))), []);
  });

  it("holds a write never answered as in flight with everything after it, and says what it left unjudged", () => {
    const state = new TrafficState();
    state.observe(listOf([1, 2, 3], at(1)));
    state.barrier(at(2), "#2 POST /admin/reset", { unanswered: true });
    const told: string[] = [];
    const notCompared = (why: string) => told.push(why);
    // The upstream carried the reset out only after the proxy gave up on it, between these lists.
    for (const [ids, seq] of [
      [[1, 2, 3], 3],
      [[], 4],
      [[], 40],
    ] as const)
      assert.deepEqual(rulesOf(state.observe({ ...listOf(ids, at(seq)), notCompared })), []);
    assert.deepEqual(rulesOf(state.observe({ ...cancelOf("2", 204, at(41)), notCompared })), []);
    assert.deepEqual(rulesOf(state.observe({ ...cancelOf("2", 204, at(42)), notCompared })), []);
    assert.equal(told.length, 5);
    assert.match(told[0] ?? "", /^not compared with other lists: #2 POST \/admin\/reset was never answered/);
    assert.match(told[3] ?? "", /^read as a cancel that may or may not have taken effect: #2 POST/);
    assert.match(
      state.notes.get("unanswered-writes")?.message ?? "",
      /^1 write outside the contract was never answered \(first: #2 POST \/admin\/reset\): .* \(3 not compared\) .* \(2 answered ones\)/,
    );
  });

  it("keeps comparing past a write answered, and tells of a list only when its verdict came after a barrier", () => {
    const state = new TrafficState();
    const told: string[] = [];
    const notCompared = (why: string) => told.push(why);
    state.observe({ ...listOf([1, 2, 3], at(1)), notCompared });
    state.barrier(at(2), "#2 POST /__control/reset");
    state.observe({ ...listOf([1, 2, 3], at(3)), notCompared });
    assert.deepEqual(rulesOf(state.observe({ ...listOf([1, 2], at(4)), notCompared })), [
      "listed-orders-stay",
    ]);
    // Over before the barrier, judged only after it: not compared, and told so.
    state.observe({ ...listOf([1], { ...at(0), seq: 9 }), notCompared });
    assert.deepEqual(told, [
      "not compared with the lists before it: its verdict came after a later write outside the contract, at which the state rules started again",
    ]);
    assert.equal(state.notes.get("unanswered-writes"), undefined);
  });

  it("gives no finding that the history between barriers alone would not give", () => {
    fc.assert(
      fc.property(traffic, (items) => assertNoFindingBeyondSegments(items)),
      { numRuns: 300 },
    );
  });
});

interface Item {
  kind: "list" | "cancel" | "barrier";
  view: "a" | "b";
  /** For a list: each order shown, with the quantity its record shows. */
  shown: Array<[number, number]>;
  orderId: number;
  status: number | null;
  ref: ExchangeRef;
}

/** Lists, cancels and barriers at random, any of them overlapping its neighbours, fed in the order they end. */
const traffic = fc
  .array(
    fc.record({
      kind: fc.constantFrom(
        "list" as const,
        "list" as const,
        "cancel" as const,
        "cancel" as const,
        "barrier" as const,
      ),
      view: fc.constantFrom("a" as const, "b" as const),
      shown: fc.uniqueArray(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 2 })), {
        selector: ([id]) => id,
        maxLength: 4,
      }),
      orderId: fc.integer({ min: 1, max: 4 }),
      status: fc.constantFrom(204, 204, 409, 404, 401, null),
      delay: fc.integer({ min: 0, max: 9 }),
      duration: fc.integer({ min: 1, max: 30 }),
    }),
    { maxLength: 40 },
  )
  .map((drawn) =>
    drawn
      .map(({ delay, duration, ...item }, seq): Item => {
        const startedAt = seq * 10 + delay;
        // No two exchanges end at once, so that the order they are fed in is the order they ended in.
        return {
          ...item,
          ref: { seq, label: `#${seq}`, startedAt, endedAt: startedAt + duration + seq / 1000 },
        };
      })
      .sort((one, other) => one.ref.endedAt - other.ref.endedAt),
  );

const overlap = (one: ExchangeRef, other: ExchangeRef) =>
  one.startedAt < other.endedAt && other.startedAt < one.endedAt;

/** What is in flight when `item` is judged, among `items`: cancels by order id, and barriers. */
function inFlightAt(item: Item, items: readonly Item[]): (key: string) => boolean {
  const moment = item.ref.endedAt;
  const flying = items.filter((other) => other.ref.startedAt < moment && moment < other.ref.endedAt);
  return (key) =>
    flying.some((other) =>
      key === WRITE_OUTSIDE_CONTRACT_IN_FLIGHT
        ? other.kind === "barrier"
        : other.kind === "cancel" && String(other.orderId) === key,
    );
}

/** The rules each exchange broke, fed to `state` with what was in flight among `items`. */
function verdicts(state: TrafficState, items: readonly Item[]): Set<string> {
  const found = new Set<string>();
  for (const item of items) {
    if (item.kind === "barrier") {
      state.barrier(item.ref, item.ref.label);
      continue;
    }
    const cancelInFlight = inFlightAt(item, items);
    const event: StateEvent =
      item.kind === "list"
        ? {
            kind: "list",
            view: item.view,
            session: "",
            bytes: Buffer.from(JSON.stringify(item.shown)),
            orders: () => listed(item.shown),
            cancelInFlight,
            at: item.ref,
          }
        : {
            kind: "cancel",
            view: item.view,
            session: "",
            orderId: String(item.orderId),
            status: item.status,
            cancelInFlight,
            at: item.ref,
          };
    for (const finding of state.observe(event)) found.add(`${item.ref.label} ${finding.rule}`);
  }
  return found;
}

/**
 * Every exchange the whole traffic flags is one that the exchanges between two barriers flag when judged
 * alone, by a proxy that saw nothing else, with each exchange that overlaps a barrier read as what it can
 * be: a list is left out, a cancel is one whose effect is undecided.
 */
function assertNoFindingBeyondSegments(items: readonly Item[]): void {
  const whole = verdicts(new TrafficState(), items);
  const barriers = items.filter((item) => item.kind === "barrier");
  const segments: Item[][] = [[]];
  for (const item of items) {
    if (item.kind === "barrier") segments.push([]);
    else if (!barriers.some((barrier) => overlap(barrier.ref, item.ref))) segments.at(-1)?.push(item);
    else if (item.kind === "cancel") segments.at(-1)?.push({ ...item, status: null });
  }
  // Compared by exchange: which rule names a violation may differ with what else was in flight (a cancel
  // still under way turns "a refusal changed the state" into "the answer did not match the state").
  const flagged = (findings: Iterable<string>) =>
    new Set([...findings].map((finding) => finding.split(" ")[0]));
  const alone = flagged(segments.flatMap((segment) => [...verdicts(new TrafficState(), segment)]));
  assert.deepEqual(
    [...flagged(whole)].filter((exchange) => !alone.has(exchange)),
    [],
  );
}
