import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { builtInContract } from "../../contract/built-in.ts";
import { judgeListBody } from "../judging/list-judge.ts";
import { receivedVerdict, sendableVerdict } from "../judging/verdict-transfer.ts";

const contract = builtInContract();
const options = { validateOrder: contract.schema("Order"), orderPlan: contract.flatPlan("Order") };

/** A list whose ids come out of order, so that its index has a hash table to carry as well. */
function shuffledList(count: number): Buffer {
  const orders = Array.from({ length: count }, (_, place) => {
    const id = ((place * 7919) % 10007) + 2 ** 40;
    return `{"id":${id},"petId":${place},"quantity":1,"status":"placed","complete":false}`;
  });
  return Buffer.from(`[${orders.join(",")}]`);
}

/** A verdict across a thread as the judges' thread sends it: transferred, not copied. */
function crossed(body: Buffer) {
  const { sent, transfer } = sendableVerdict(judgeListBody(body, options));
  const arrived = structuredClone(sent, { transfer });
  return { transfer, arrived, received: receivedVerdict(arrived) };
}

describe("a verdict from the judges' thread", () => {
  test("keeps every order, its place and its record", () => {
    const body = shuffledList(5000);
    const { received } = crossed(body);
    const judgedHere = judgeListBody(body, options).orders;
    assert.equal(received.orders.size, 5000);
    assert.deepEqual([...received.orders.ids()], [...judgedHere.ids()]);
    for (const id of judgedHere.ids()) assert.ok(received.orders.sameIn(judgedHere, id), `order ${id}`);
    assert.equal(received.orders.largest, judgedHere.largest);
  });

  // The proxy's thread takes the index over as it arrives: rebuilding it there, one order at a time (with
  // its hash table when the ids come out of order), held the forwarding of every other exchange meanwhile.
  test("is taken over as its arrays arrive, with nothing rebuilt or copied per order", () => {
    const body = shuffledList(5000);
    const { transfer, arrived, received } = crossed(body);
    assert.ok(
      transfer.every((buffer) => buffer.byteLength === 0),
      "every array of the index is transferred",
    );
    assert.ok(arrived.orders.ids.slots, "the hash table travels with the ids");
    const judgedHere = judgeListBody(body, options).orders;
    const [first] = judgedHere.ids();
    assert.ok(first !== undefined && received.orders.sameIn(judgedHere, first));
    // The received index reads the very arrays that arrived: a change to them is a change to it.
    const digests = arrived.orders.digestA;
    digests[0] = (digests[0] as number) ^ 1;
    assert.equal(received.orders.sameIn(judgedHere, first), false);
  });
});
