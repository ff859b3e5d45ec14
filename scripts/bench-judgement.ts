import type { IncomingMessage } from "node:http";
import { createReader } from "../conformance/proxy/expectation.ts";
import { LazyResponse } from "../conformance/proxy/forward-exchange.ts";
import { judgeExchange } from "../conformance/proxy/judged-exchange.ts";
import { RECORDS_KEPT_UP_TO, TrafficState } from "../conformance/proxy/state-rules.ts";
import { builtInContract } from "../contract/built-in.ts";
import { createVersionedRouter, readOperations } from "../contract/operations.ts";
import { median } from "./median.ts";

/**
 * What judging one list costs in the proxy's process, without HTTP: an answer the same as the last one
 * (the path the load test takes) and answers that differ every time (two lists, alternating, each one
 * parsed, validated and compared order by order with the one before).
 */
export async function judgementCost(
  listUrl: string,
  key: string,
  rounds = 5,
  count = 20_000,
): Promise<{ same: number; different: number }> {
  const response = await fetch(listUrl, { headers: { authorization: `Bearer ${key}` } });
  const first = Buffer.from(await response.arrayBuffer());
  // The same orders with one field changed: a valid list that the state rules must compare in full.
  const second = Buffer.from(first.toString("utf8").replace('"quantity":1', '"quantity":7'));
  const contract = builtInContract();
  const operations = readOperations(contract);
  const routed = createVersionedRouter(operations)("GET", "/v1/store/orders");
  const incoming = { headers: { "content-type": "application/json; charset=utf-8" } } as IncomingMessage;
  const time = (pick: (index: number) => Buffer) => {
    const state = new TrafficState();
    const context = {
      read: createReader(operations, false),
      validators: {
        errorRecord: contract.schema("Error"),
        orderRecord: contract.schema("Order"),
        keepRecordsUpTo: RECORDS_KEPT_UP_TO,
      },
      state,
      passed: new Map(),
    };
    const started = performance.now();
    for (let index = 0; index < count; index++) {
      const bytes = pick(index);
      judgeExchange(
        {
          seq: index,
          method: "GET",
          url: "/v1/store/orders",
          ...(routed ? { routed } : {}),
          token: key,
          secrets: [key],
          session: undefined,
          recorded: () => ({ method: "GET", path: "/v1/store/orders", headers: {} }),
          // One after the other, as a polling client sends them.
          startedAt: index * 2,
          durationMs: 1,
          response: new LazyResponse(200, incoming, { decoded: bytes, whole: true, received: bytes.length }),
        },
        context,
      );
    }
    return ((performance.now() - started) * 1000) / count;
  };
  const same: number[] = [];
  const different: number[] = [];
  for (let round = 0; round < rounds; round++) {
    same.push(time(() => first));
    different.push(time((index) => (index % 2 === 0 ? first : second)));
  }
  return { same: median(same), different: median(different) };
}
