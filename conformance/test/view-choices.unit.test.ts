import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { History } from "../model/history.ts";
import { ALL_RUN_CHOICES } from "../model/spec-model.ts";
import type { ExchangeRef } from "../proxy/state-rules/traffic-rule.ts";
import { describeShownElsewhere, ViewChoices } from "../proxy/state-rules/view-choices.ts";

const at = (seq: number): ExchangeRef => ({
  seq,
  label: `#${seq}`,
  startedAt: seq * 10,
  endedAt: seq * 10 + 5,
});

/** Order `orderId`: a 204 then a second cancel answered `second`, one after the other. */
function twoCancels(orderId: string, second: number, seqs: [number, number]): History {
  const cancel = (seq: number, status: number) =>
    ({ op: "cancel", client: seq, orderId, sentAt: seq * 10, answeredAt: seq * 10 + 5, status }) as const;
  return {
    given: { pending: [], shipped: [], missing: [], unknown: [orderId] },
    records: [],
    operations: [cancel(seqs[0], 204), cancel(seqs[1], second)],
  };
}

describe("what a view has shown of the spec's open choices", () => {
  it("says once per order and exchange what the deployment showed there", () => {
    const choices = new ViewChoices();
    const ruledOut = choices.narrow(
      ALL_RUN_CHOICES.filter((each) => each.secondCancelStatus === 409),
      "5",
      twoCancels("5", 409, [1, 2]),
      [at(1), at(2)],
    );
    assert.equal(ruledOut.length, 2, "both combinations with a second cancel answering 404");
    assert.equal(
      describeShownElsewhere(ruledOut),
      "this deployment showed a second cancel answers 409 for order 5 at exchange #2",
    );
  });

  it("cites no exchange of the story being judged as where the deployment showed otherwise", () => {
    // Order 1 listed (#1), its 404 answered (#3) before the 204 sent earlier (#2): judged without the 204,
    // the 404 rules out that cancelled orders leave the list; with it, that explains the later list (#5).
    const list = (seq: number, orderId: string, shown: boolean) =>
      ({
        op: "list",
        client: seq,
        sentAt: seq * 10,
        answeredAt: seq * 10 + 5,
        status: 200,
        shown: new Map(shown ? [[orderId, 0]] : []),
      }) as const;
    const cancel = (seq: number, orderId: string, status: number, sentAt: number, answeredAt: number) =>
      ({ op: "cancel", client: seq, orderId, sentAt, answeredAt, status }) as const;
    const story = (orderId: string, operations: History["operations"]): History => ({
      given: { pending: [], shipped: [], missing: [], unknown: [orderId] },
      records: ["{}"],
      operations,
    });
    const choices = new ViewChoices();
    const early = story("1", [list(1, "1", true), cancel(3, "1", 404, 11, 30)]);
    choices.narrow(
      ALL_RUN_CHOICES.filter((each) => each.cancelledOrdersListed),
      "1",
      early,
      [at(1), at(3)],
    );
    const whole = story("1", [...early.operations, cancel(2, "1", 204, 10, 40), list(5, "1", false)]);
    assert.deepEqual(choices.shownElsewhere("1", whole, [at(1), at(3), at(2), at(5)]), []);
    const other = story("2", [list(1, "2", true), cancel(4, "2", 204, 40, 45), list(5, "2", false)]);
    const elsewhere = choices.shownElsewhere("2", other, [at(1), at(4), at(5)]);
    assert.equal(
      describeShownElsewhere(elsewhere),
      "this deployment showed cancelled orders stay listed for order 1 at exchange #3",
    );
  });

  it("says once what the deployment showed at an exchange that ruled combinations out twice", () => {
    const choices = new ViewChoices();
    const early: History = {
      given: { pending: [], shipped: [], missing: [], unknown: ["1"] },
      records: ["{}"],
      operations: [
        { op: "list", client: 1, sentAt: 0, answeredAt: 5, status: 200, shown: new Map([["1", 0]]) },
        { op: "cancel", client: 3, orderId: "1", sentAt: 11, answeredAt: 30, status: 404 },
      ],
    };
    const refs = [at(1), at(3)];
    const listedStays = ALL_RUN_CHOICES.filter((each) => each.cancelledOrdersListed);
    const ruledOut = [
      ...choices.narrow(listedStays, "1", early, refs),
      ...choices.narrow(
        listedStays.filter((each) => each.secondCancelStatus === 404),
        "1",
        early,
        refs,
      ),
    ];
    assert.equal(ruledOut.length, 3);
    assert.equal(
      describeShownElsewhere(ruledOut),
      "this deployment showed cancelled orders stay listed, a second cancel answers 404 for order 1 at exchange #3",
    );
  });
});
