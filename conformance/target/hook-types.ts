import type { ControlTransport } from "../../contract/control-client.ts";
import type { Report } from "../reports/report.ts";

/**
 * Where a run's own client sends the mock's control requests, for the built-in mock-control hook: the
 * same connections as `fetch`, without WHATWG's objects. Not part of the hooks' API. Registered, so that
 * every copy of this module in a build names the same key.
 */
export const CONTROL_TRANSPORT: unique symbol = Symbol.for("petstore-conformance.controlTransport");

/** What a hook is given: enough to reach the target and its test hooks, never printed anywhere. */
export interface HookContext {
  baseUrl: string;
  apiKey: string;
  session?: string;
  fetch: typeof fetch;
  [CONTROL_TRANSPORT]?: ControlTransport;
}

/** Ids a beforeRun hook provides, as strings of digits so int64 ids stay exact. */
export interface ProvidedIds {
  pendingOrderId?: string;
  shippedOrderId?: string;
  missingOrderId?: string;
  /** A pending order for the race scenario, cancelled by many clients at once. */
  raceOrderId?: string;
  /**
   * A session of the project's mock the hook made its orders in, for a run given none: the run is sent in
   * it (`X-Mock-Session`), and its report names it.
   */
  session?: string;
  /** Many pending orders, for explore (which also takes pendingOrderId and raceOrderId). */
  pending?: readonly string[];
  /** Many shipped orders, for explore. */
  shipped?: readonly string[];
  /** Many ids no order has, for explore. */
  missing?: readonly string[];
}

/** How many fresh orders explore asks a provision hook for. */
export interface ProvisionRequest {
  pending: number;
  shipped: number;
}

/** Fresh orders from a provision hook, as strings of digits; fewer than asked (or none) when it has no more. */
export interface ProvisionedOrders {
  pending?: readonly string[];
  shipped?: readonly string[];
}

/** A `--hooks` module's exports: provisioning before the run, clean-up or publishing after it. */
export interface ConformanceHooks {
  beforeRun?(context: HookContext): ProvidedIds | undefined | Promise<ProvidedIds | undefined>;
  afterRun?(context: HookContext, report: Report): void | Promise<void>;
  /** Explore: fresh orders, called as often as its search needs them. */
  provision?(
    context: HookContext,
    wanted: ProvisionRequest,
  ): ProvisionedOrders | undefined | Promise<ProvisionedOrders | undefined>;
  /**
   * Explore: pending orders it is done with (their history is over), which the hook may remove so that
   * the deployment's list stays short.
   */
  release?(context: HookContext, orderIds: readonly string[]): void | Promise<void>;
}
