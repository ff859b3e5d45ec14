/**
 * The conformance scenarios as data. One runner (runner.ts) plays them against any target; every response
 * also goes through the checks that hold for all responses (response-checks.ts).
 */

import type { OperationName } from "../judging/operation-traits.ts";
import {
  LIST_PARAMETERS,
  MALFORMED_ORDER_ID,
  UNAUTHORIZED,
  UNAUTHORIZED_CANCEL,
} from "../judging/readings.ts";
import type { StateRuleOf } from "../model/state-rule-catalogue.ts";

/** How a request authenticates: the valid key, or one of the ways the spec says must get 401. */
export type AuthVariant = "valid" | "none" | "basic" | "empty-bearer" | "unknown-key";

/** Which order a cancel names: an order given by the user, one found absent, or a raw path segment. */
export type OrderRef = "pending" | "shipped" | "missing" | "race" | { raw: string };

export interface Step {
  name: string;
  operation: OperationName;
  order?: OrderRef;
  auth?: AuthVariant;
  /** A query string sent with the request, without the `?`. */
  query?: string;
  /** The statuses the spec allows here, read strictly (`--strict`). */
  expect: readonly number[];
  /** Why, in the spec's words, with its section. */
  because: string;
  /**
   * The default reading where the spec documents no case for the request (input that is not what the
   * operation takes): also the 4xx statuses valid backends answer such input with, each with an Error
   * record when it has a body. Without it, the strict reading is the only one.
   */
  lenient?: { expect: readonly number[]; because: string };
  /**
   * Sent by many clients at once (`--race-concurrency`, each on a connection of its own) while others list
   * the orders: of the answers exactly one may be 204.
   */
  race?: boolean;
}

/** State checks between snapshots of the list (state-rule-catalogue.ts); rules.ts says how each is judged. */
export type RuleName = StateRuleOf<"suite">;

export interface Scenario {
  id: string;
  title: string;
  /** Phase 1 changes nothing; phase 2 cancels. Scenarios of a phase run concurrently, steps in order. */
  phase: 1 | 2;
  /** Ids the user must supply, since the run never guesses which order it may change. */
  needs?: "pending" | "shipped" | "race";
  steps: readonly Step[];
  rules?: readonly RuleName[];
}

const REFUSED_AUTH: ReadonlyArray<{ auth: AuthVariant; label: string }> = [
  { auth: "none", label: "no-header" },
  { auth: "basic", label: "basic-scheme" },
  { auth: "empty-bearer", label: "empty-token" },
  { auth: "unknown-key", label: "unknown-key" },
];
/** Stands for the absent order's id in a malformed one. */
export const MISSING_ID = "{missing}";

export const MALFORMED_ORDER_IDS: ReadonlyArray<{ label: string; raw: string }> = [
  { label: "letters", raw: "abc" },
  { label: "fraction", raw: `${MISSING_ID}.5` },
  { label: "dash", raw: "-" },
  { label: "beyond-int64", raw: "9223372036854775808" },
  { label: "twenty-digits", raw: "99999999999999999999" },
  { label: "very-long", raw: "9".repeat(1000) },
];

export const SCENARIOS: readonly Scenario[] = [
  {
    id: "list-orders",
    title: "listOrders with a valid key returns every order",
    phase: 1,
    steps: [
      {
        name: "list",
        operation: "listOrders",
        expect: [200],
        because: "§4.1: 200 with an array of Order records",
      },
    ],
  },
  {
    id: "list-unauthorized",
    title: "listOrders refuses a missing or invalid API key with 401",
    phase: 1,
    steps: REFUSED_AUTH.map(({ auth, label }) => ({
      name: label,
      operation: "listOrders",
      auth,
      expect: [401],
      because: UNAUTHORIZED,
    })),
  },
  {
    id: "list-no-paging",
    title: "listOrders has no filtering or pagination: parameters do not shrink the list",
    phase: 1,
    steps: [
      {
        name: "with-parameters",
        operation: "listOrders",
        query: "limit=1&offset=1&page=2&pageSize=1&status=shipped",
        ...LIST_PARAMETERS,
      },
    ],
    rules: ["list-ignores-paging-parameters"],
  },
  {
    id: "cancel-unauthorized",
    title: "cancelOrder refuses a missing or invalid API key with 401, before looking at the order",
    phase: 1,
    steps: (["missing", "pending", "shipped"] as const).flatMap((order) =>
      REFUSED_AUTH.map(({ auth, label }) => ({
        name: `${order}-order.${label}`,
        operation: "cancelOrder" as const,
        order,
        auth,
        expect: [401],
        because: UNAUTHORIZED_CANCEL,
      })),
    ),
    rules: ["refusals-change-nothing"],
  },
  {
    id: "cancel-not-found",
    title: "cancelOrder of an order that does not exist is 404 with an Error record",
    phase: 1,
    steps: [
      {
        name: "cancel",
        operation: "cancelOrder",
        order: "missing",
        expect: [404],
        because: "§4.2, §7: no order with the given orderId gets 404",
      },
    ],
  },
  {
    id: "cancel-malformed-id",
    title: "cancelOrder with an orderId that is not an int64 gets no 5xx and no undocumented status",
    phase: 1,
    steps: MALFORMED_ORDER_IDS.map(({ label, raw }) => ({
      name: label,
      operation: "cancelOrder",
      order: { raw },
      ...MALFORMED_ORDER_ID,
    })),
  },
  {
    id: "cancel-pending",
    title: "cancelOrder of a pending order is 204 once; the order cannot be cancelled again",
    phase: 2,
    needs: "pending",
    steps: [
      {
        name: "cancel",
        operation: "cancelOrder",
        order: "pending",
        expect: [204],
        because:
          "§3, §4.2: a pending order is cancelled with 204 and no body (refused 401 cancels before this must not have changed it)",
      },
      {
        name: "cancel-again",
        operation: "cancelOrder",
        order: "pending",
        expect: [409, 404],
        because:
          "§3 rule 1, §4.2: only pending orders can be cancelled, so the cancelled order gets 409 (404 accepted: the spec does not say whether a cancelled order still exists)",
      },
    ],
    rules: ["pending-order-listed", "listed-orders-stay"],
  },
  {
    id: "cancel-shipped",
    title: "cancelOrder of a shipped order is 409 and leaves it unchanged",
    phase: 2,
    needs: "shipped",
    steps: [
      {
        name: "cancel",
        operation: "cancelOrder",
        order: "shipped",
        expect: [409],
        because: "§3, §4.2, §7: an order that has shipped cannot be cancelled: 409",
      },
      {
        name: "cancel-again",
        operation: "cancelOrder",
        order: "shipped",
        expect: [409],
        because: "§3, §4.2: the order is unchanged after a 409, so cancelling it again is 409 again",
      },
    ],
    rules: ["shipped-order-unchanged"],
  },
  {
    id: "cancel-race",
    title: "Concurrent cancels of one pending order: exactly one 204, the others 409 (or 404)",
    phase: 2,
    needs: "race",
    steps: [
      {
        name: "cancel",
        operation: "cancelOrder",
        order: "race",
        race: true,
        expect: [204, 409, 404],
        because:
          "§3 rule 1, §4.2: only a pending order can be cancelled, so of cancels arriving together one is 204 and the others find it cancelled: 409 (404 accepted: the spec does not say whether a cancelled order still exists)",
      },
    ],
  },
];
