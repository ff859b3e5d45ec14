import { exactInteger, isInt64 } from "../../contract/exact-json.ts";
import type { Operation } from "../../contract/operations.ts";
import { LIST_PARAMETERS, MALFORMED_ORDER_ID, UNAUTHORIZED } from "../scenarios.ts";

/** The request as the contract sees it: which operation, and what the spec lets it be answered with. */
export interface Expectation {
  operation: Operation;
  expect: readonly number[];
  because: string;
  /** The order a cancel names, as exact digits, when it is an int64. */
  orderId?: string;
  /** Whether the request carries a bearer token at all; without one only 401 is right. */
  credentialed: boolean;
}

export interface LiveRequest {
  method: string;
  /** The path under the base address (`/store/orders/5`), percent-encoded as sent. */
  path: string;
  /** The query string without its `?`, empty when there is none. */
  query: string;
  authorization: string | undefined;
}

const CANCEL_PATH = /^\/store\/orders\/([^/]+)$/;

/**
 * What the suite would expect of this request: the same readings as its scenarios. A request without a
 * bearer token must get 401 whatever it asks for (authentication comes before the order is looked at);
 * one with a token may get any status the operation documents, since the proxy cannot know whether the
 * token is valid. Undefined for requests the contract has no operation for.
 */
export function expectationFor(
  request: LiveRequest,
  operations: ReadonlyMap<string, Operation>,
  strict: boolean,
): Expectation | undefined {
  const credentialed = bearerToken(request.authorization) !== undefined;
  const documented = (operation: Operation) => [...operation.responses.keys()];
  if (request.path === "/store/orders" && request.method === "GET") {
    const operation = operations.get("listOrders");
    if (!operation) return undefined;
    if (!credentialed) return { operation, expect: [401], because: UNAUTHORIZED, credentialed };
    if (request.query === "")
      return {
        operation,
        expect: documented(operation),
        because: "§4.1: 200 with an array of Order records, or 401 for a key that is not valid",
        credentialed,
      };
    const reading = strict ? LIST_PARAMETERS : LIST_PARAMETERS.lenient;
    return { operation, expect: [...reading.expect, 401], because: reading.because, credentialed };
  }
  const match = CANCEL_PATH.exec(request.path);
  if (match?.[1] === undefined || request.method !== "DELETE") return undefined;
  const operation = operations.get("cancelOrder");
  if (!operation) return undefined;
  const segment = safeDecode(match[1]);
  const exact = segment !== undefined && /^-?\d+$/.test(segment) ? exactInteger(segment) : null;
  const orderId = exact !== null && isInt64(exact) ? exact.toString() : undefined;
  if (!credentialed) {
    return {
      operation,
      expect: [401],
      because: `${UNAUTHORIZED}; authentication applies to every operation, so an unknown order with a bad key is 401, not 404`,
      credentialed,
      ...(orderId !== undefined ? { orderId } : {}),
    };
  }
  if (orderId === undefined) {
    const reading = strict ? MALFORMED_ORDER_ID : MALFORMED_ORDER_ID.lenient;
    return { operation, expect: [...reading.expect, 401], because: reading.because, credentialed };
  }
  return {
    operation,
    expect: documented(operation),
    because:
      "§4.2: cancelOrder answers 204 (cancelled), 401 (key not valid), 404 (no such order) or 409 (not pending)",
    credentialed,
    orderId,
  };
}

/** The token of a well-formed `Authorization: Bearer <token>`, the only form §5 accepts. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer +(\S+)$/i.exec(authorization ?? "");
  return match?.[1];
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
