import type { Exchange } from "../judging/exchange.ts";
import type { ListVerdict } from "../judging/list-judge.ts";
import type { OrderIndex } from "../judging/order-index.ts";
import { limitText } from "../judging/response-checks.ts";
import type { SettingNames } from "../judging/setting-names.ts";

/** One reading of the list, kept compactly: each order's exact id and a digest of its record, or why there is none. */
export interface ListSnapshot {
  exchange: Exchange;
  orders?: OrderIndex;
  /** Whole records of the orders the run names, for messages that show them. */
  records?: ReadonlyMap<string, string>;
  /** Ids seen more than once, with how many times beyond the first. */
  repeats?: ReadonlyMap<string, number>;
  /** Orders whose id is no int64 integer, so the list cannot be read whole by id. */
  unindexed?: number;
  problem?: string;
  /** Why the list was read and judged but its ids not kept (past --max-memory): rules on it are not judged. */
  notKept?: string;
}

export function snapshotOf(
  exchange: Exchange,
  status: number | undefined,
  list: ListVerdict | undefined,
  names: SettingNames,
): ListSnapshot {
  if (status !== 200) return { exchange, problem: exchange.error ?? `status ${status}` };
  if (exchange.response?.cut !== undefined) return { exchange, problem: exchange.response.cut };
  if (list?.limit !== undefined) return { exchange, notKept: limitText(list.limit, names) };
  // Judged only up to an order (its reading found no room in the account): what it lists is not all there is.
  if (list?.partial !== undefined) return { exchange, notKept: list.partial };
  if (!list || list.syntax !== undefined) return { exchange, problem: "the body is not valid JSON" };
  if (list.notArray) return { exchange, problem: "the body is not a JSON array" };
  if (list.indexLimit !== undefined)
    return {
      exchange,
      notKept: `the list has more orders than the ${list.indexLimit} whose ids the suite keeps within ${names.maxMemory}`,
    };
  return {
    exchange,
    orders: list.orders,
    records: list.records,
    repeats: list.repeats,
    unindexed: list.unindexed,
  };
}

/** How many times an order is listed. */
export function timesListed(snapshot: ListSnapshot, id: string): number {
  if (!snapshot.orders?.has(id)) return 0;
  return 1 + (snapshot.repeats?.get(id) ?? 0);
}
