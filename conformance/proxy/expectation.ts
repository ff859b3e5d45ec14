import { exactInteger, isInt64 } from "../../contract/exact-json.ts";
import type { Operation, Routed } from "../../contract/operations.ts";
import { operationOfKind, orderIdSegment } from "../judging/operation-traits.ts";
import {
  LIST_PARAMETERS,
  MALFORMED_ORDER_ID,
  UNAUTHORIZED,
  UNAUTHORIZED_CANCEL,
} from "../judging/readings.ts";

/** What the spec lets one kind of request be answered with, and why: the suite's readings. */
export interface Expectation {
  operation: Operation;
  expect: readonly number[];
  because: string;
}

/** A request as the contract sees it: its expectation, and the order a cancel names when it is an int64. */
export interface RequestReading {
  expectation: Expectation;
  orderId?: string;
}

export interface LiveRequest {
  /** The operation the request's path spells, as the proxy's edge routed it once. */
  routed: Routed;
  /** Whether the request has a query string. */
  hasQuery: boolean;
  /** The bearer token, when the request has a well-formed `Authorization: Bearer <token>`. */
  token: string | undefined;
}

/**
 * What the suite would expect of each request, with the same readings as its scenarios. A request without
 * a bearer token must get 401 whatever it asks for (authentication comes before the order is looked at);
 * one with a token may get any status the operation documents, since the proxy cannot know whether the
 * token is valid. The expectations are made once: reading a request allocates its order id only.
 */
export function createReader(
  operations: ReadonlyMap<string, Operation>,
  strict: boolean,
): (request: LiveRequest) => RequestReading | undefined {
  const list = operationOfKind(operations, "list");
  const cancel = operationOfKind(operations, "cancel");
  const documented = (operation: Operation) => [...operation.responses.keys()];
  const parameters = strict ? LIST_PARAMETERS : LIST_PARAMETERS.lenient;
  const malformed = strict ? MALFORMED_ORDER_ID : MALFORMED_ORDER_ID.lenient;
  const lists = list && {
    refused: { expectation: { operation: list, expect: [401], because: UNAUTHORIZED } },
    plain: {
      expectation: {
        operation: list,
        expect: documented(list),
        because: "§4.1: 200 with an array of Order records, or 401 for a key that is not valid",
      },
    },
    withQuery: {
      expectation: { operation: list, expect: [...parameters.expect, 401], because: parameters.because },
    },
  };
  const cancels = cancel && {
    refused: {
      operation: cancel,
      expect: [401],
      because: UNAUTHORIZED_CANCEL,
    },
    malformed: {
      expectation: { operation: cancel, expect: [...malformed.expect, 401], because: malformed.because },
    },
    int64: {
      operation: cancel,
      expect: documented(cancel),
      because:
        "§4.2: cancelOrder answers 204 (cancelled), 401 (key not valid), 404 (no such order) or 409 (not pending)",
    },
  };
  return (request) => {
    const { routed } = request;
    if (routed.operation === list && lists) {
      if (request.token === undefined) return lists.refused;
      return request.hasQuery ? lists.withQuery : lists.plain;
    }
    const segment = orderIdSegment(routed.operation, routed.params);
    if (routed.operation !== cancel || !cancels || segment === undefined) return undefined;
    const orderId = int64Id(segment);
    if (request.token === undefined)
      return orderId === undefined
        ? { expectation: cancels.refused }
        : { expectation: cancels.refused, orderId };
    return orderId === undefined ? cancels.malformed : { expectation: cancels.int64, orderId };
  };
}

/** A path segment's order id as exact digits, when it is an int64. */
export function int64Id(segment: string): string | undefined {
  let text: string;
  try {
    text = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  if (!/^-?\d+$/.test(text)) return undefined;
  const exact = exactInteger(text);
  return exact !== null && isInt64(exact) ? exact.toString() : undefined;
}
