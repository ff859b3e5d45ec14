import { isInt64 } from "../../contract/exact-json.ts";

// Longer strings cannot be int64 whatever their leading zeros; this bounds the work done on hostile input.
const MAX_ORDER_ID_LENGTH = 64;
const DECIMAL_INTEGER = /^-?\d+$/;

/**
 * The orderId path parameter as an exact int64: optional minus sign and decimal digits (leading zeros
 * allowed, as any integer parser reads them). Anything else names no order, so it is null.
 */
export function parseOrderId(text: string): bigint | null {
  if (text.length > MAX_ORDER_ID_LENGTH || !DECIMAL_INTEGER.test(text)) return null;
  const id = BigInt(text);
  return isInt64(id) ? id : null;
}
