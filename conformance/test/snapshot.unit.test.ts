import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtInContract } from "../../contract/built-in.ts";
import type { Exchange } from "../judging/exchange.ts";
import { ListJudge } from "../judging/list-judge.ts";
import { RUN_OPTION_NAMES } from "../judging/setting-names.ts";
import { snapshotOf } from "../suite/snapshot.ts";

const validateOrder = builtInContract().schema("Order");
const exchange = {
  request: { method: "GET", path: "/store/orders", headers: {} },
  response: { status: 200, headers: {}, body: "" },
} as unknown as Exchange;

describe("a reading of the list as the suite's state rules keep it", () => {
  it("keeps the orders of a list judged whole", () => {
    const judge = new ListJudge({ validateOrder });
    judge.write(Buffer.from('[{"id":1},{"id":2}]'));
    const snapshot = snapshotOf(exchange, 200, judge.end(), RUN_OPTION_NAMES);
    assert.equal(snapshot.orders?.has("2"), true);
    assert.equal(snapshot.notKept, undefined);
  });

  it("never reads a list judged only in part as the whole list: its orders are not kept for the rules", () => {
    const judge = new ListJudge({ validateOrder });
    judge.write(Buffer.from('[{"id":1},{"id":2}'));
    const verdict = judge.endPartial("over the memory budget");
    assert.ok(verdict.partial !== undefined);
    const snapshot = snapshotOf(exchange, 200, verdict, RUN_OPTION_NAMES);
    assert.equal(snapshot.orders, undefined, "order 3, past where the judging stopped, is not 'not listed'");
    assert.match(snapshot.notKept ?? "", /^over the memory budget: the first \d orders/);
  });
});
