import { parseExact, stringifyExact } from "../../contract/exact-json.ts";
import type { ListVerdict } from "./list-judge.ts";
import { OrderIndex, type OrderIndexParts, partsBuffers } from "./order-index.ts";

/**
 * A list's verdict as it crosses from the judge's worker thread: structured-clone friendly, its index as
 * typed arrays handed over without a copy, and a value that is not an array as exact JSON text (numbers
 * past 2^53 keep their digits, which a clone of lossless-json's numbers would not).
 */
export interface SentVerdict extends Omit<ListVerdict, "orders" | "notArray"> {
  orders: OrderIndexParts;
  notArrayText?: string;
}

export function sendableVerdict(verdict: ListVerdict): { sent: SentVerdict; transfer: ArrayBuffer[] } {
  const { orders, notArray, ...rest } = verdict;
  const parts = orders.parts();
  const sent: SentVerdict = { ...rest, orders: parts };
  if (notArray) sent.notArrayText = stringifyExact(notArray.value);
  return { sent, transfer: partsBuffers(parts) };
}

export function receivedVerdict(sent: SentVerdict): ListVerdict {
  const { orders, notArrayText, ...rest } = sent;
  const verdict: ListVerdict = { ...rest, orders: OrderIndex.fromParts(orders) };
  if (notArrayText !== undefined) verdict.notArray = { value: parseExact(notArrayText) };
  return verdict;
}
