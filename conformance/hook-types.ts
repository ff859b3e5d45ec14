import type { Report } from "./report.ts";

/** What a hook is given: enough to reach the target and its test hooks, never printed anywhere. */
export interface HookContext {
  baseUrl: string;
  apiKey: string;
  session?: string;
  fetch: typeof fetch;
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
}

/** A `--hooks` module's exports: provisioning before the run, clean-up or publishing after it. */
export interface ConformanceHooks {
  beforeRun?(context: HookContext): ProvidedIds | undefined | Promise<ProvidedIds | undefined>;
  afterRun?(context: HookContext, report: Report): void | Promise<void>;
}
