import { FileRefused, readBoundedFile } from "../../common/bounded-file.ts";
import { isInt64 } from "../../contract/exact-json.ts";
import type {
  ConformanceHooks,
  HookContext,
  ProvidedIds,
  ProvisionedOrders,
  ProvisionRequest,
} from "../target/hook-types.ts";
import { HookError, runHook } from "../target/hooks.ts";
import { ConformanceUsageError } from "../target/target.ts";

/** The orders given in `--order-ids FILE`, or by a hook: strings of digits. */
export interface OrderIds {
  pending: readonly string[];
  shipped: readonly string[];
  missing: readonly string[];
}

/**
 * Where explore's orders come from. Pending orders are handed out once each (a history cancels them);
 * shipped orders are handed out fresh while there are, then those given (not provisioned) again (a
 * deployment that keeps its rule leaves them as they were); missing ids are reused. Explore never names
 * an id that did not come from here.
 */
export interface OrderSupply {
  /**
   * `count` pending orders never handed out before, or undefined when there are no longer that many or
   * `until` (a performance.now() instant) has passed while asking the provision hook for more.
   */
  pending(count: number, until?: number): Promise<string[] | undefined>;
  /** `count` shipped orders (none when none were given). */
  shipped(count: number): Promise<string[]>;
  readonly missing: readonly string[];
  readonly hasShipped: boolean;
  /** Pending orders the run can ever have: those given, or unbounded with a provision hook. */
  readonly pendingLimit: number;
  /**
   * A history's orders, once it is over: the release hook, when there is one, may remove its pending
   * orders and the shipped ones provisioned for it (shipped orders given are kept, to be handed out again).
   */
  release(orderIds: readonly string[]): Promise<void>;
  /** Pending orders handed out so far. */
  readonly used: number;
}

// Asked of a provision hook at once, so that a run does not call it once per history; few, since orders
// waiting for a history lengthen every list.
const PROVISION_BATCH = 16;
const MAX_IDS_FILE_BYTES = 64 * 1024 * 1024;

/** The ids of `--order-ids FILE`: `{ "pending": [...], "shipped": [...], "missing": [...] }`. */
export function readOrderIdsFile(path: string, flag: string): OrderIds {
  let text: string;
  try {
    text = readBoundedFile(path, MAX_IDS_FILE_BYTES, "a JSON file of order ids");
  } catch (error) {
    if (error instanceof FileRefused) throw new ConformanceUsageError(`${flag} ${path}: ${error.message}`);
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConformanceUsageError(`${flag} ${path} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ConformanceUsageError(
      `${flag} ${path} must hold { "pending": [...], "shipped": [...], "missing": [...] }`,
    );
  const record = value as Record<string, unknown>;
  const field = (name: keyof OrderIds) =>
    checkedIds(record[name], `${flag} ${path}: ${name}`, ConformanceUsageError);
  return { pending: field("pending"), shipped: field("shipped"), missing: field("missing") };
}

/** Ids as canonical digits, each an int64; absent is none. */
function checkedIds(value: unknown, where: string, Failure: new (message: string) => Error): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Failure(`${where} must be an array of strings of digits`);
  return value.map((id, at) => {
    if (typeof id !== "string" || !/^-?\d{1,20}$/.test(id) || !isInt64(BigInt(id)))
      throw new Failure(
        `${where}[${at}] must be a string of digits within int64 (got ${JSON.stringify(String(id)).slice(0, 40)})`,
      );
    return BigInt(id).toString();
  });
}

/** What a beforeRun hook gave: its arrays and its single ids together. */
export function idsFromHook(provided: ProvidedIds | undefined): OrderIds {
  const single = (id: string | undefined) => (id === undefined ? [] : [id]);
  const hook = "the beforeRun hook's";
  return {
    pending: checkedIds(
      [...(provided?.pending ?? []), ...single(provided?.pendingOrderId), ...single(provided?.raceOrderId)],
      `${hook} pending`,
      HookError,
    ),
    shipped: checkedIds(
      [...(provided?.shipped ?? []), ...single(provided?.shippedOrderId)],
      `${hook} shipped`,
      HookError,
    ),
    missing: checkedIds(
      [...(provided?.missing ?? []), ...single(provided?.missingOrderId)],
      `${hook} missing`,
      HookError,
    ),
  };
}

/** A supply from ids given, topped up by the provision hook when there is one. */
export function createOrderSupply(
  given: OrderIds,
  hooks: ConformanceHooks,
  context: HookContext,
  secrets: readonly string[],
): OrderSupply {
  const pending = [...new Set(given.pending)];
  const freshShipped = [...new Set(given.shipped)];
  // Handed out again once the fresh ones are used up: the shipped orders given, never those provisioned,
  // which are released with their history.
  const allShipped = [...freshShipped];
  // Every id offered so far, handed out or waiting: an id offered again is not a new order.
  const offered = new Set([...pending, ...allShipped]);
  const givenShipped = new Set(allShipped);
  const toRelease: string[] = [];
  let releasing: Promise<void> | undefined;
  let used = 0;
  let provisionDry = hooks.provision === undefined;
  let provisioning: Promise<void> | undefined;
  // Histories played at once ask together: one call at a time, the others wait for its orders and look
  // again before asking.
  const provision = async (wanted: ProvisionRequest) => {
    if (provisioning !== undefined) return provisioning;
    provisioning = provisionNow(wanted);
    try {
      await provisioning;
    } finally {
      provisioning = undefined;
    }
  };
  const provisionNow = async (wanted: ProvisionRequest) => {
    const got = await runHook("provision", () => hooks.provision?.(context, wanted), secrets);
    const ids = provisioned(got);
    // Ids it gave before are refused: a hook that has nothing new has no more orders, else a run would ask forever.
    const fresh = (id: string) => {
      if (offered.has(id)) return false;
      offered.add(id);
      return true;
    };
    const newPending = ids.pending.filter(fresh);
    const newShipped = ids.shipped.filter(fresh);
    if (newPending.length === 0 && newShipped.length === 0) provisionDry = true;
    pending.push(...newPending);
    freshShipped.push(...newShipped);
  };
  return {
    async pending(count, until = Number.POSITIVE_INFINITY) {
      while (pending.length < count && !provisionDry) {
        if (performance.now() >= until) return undefined;
        await provision({ pending: Math.max(count, PROVISION_BATCH), shipped: 0 });
      }
      if (pending.length < count) return undefined;
      const taken = pending.splice(0, count);
      used += count;
      return taken;
    },
    async shipped(count) {
      while (freshShipped.length < count && !provisionDry && provisioning !== undefined) await provisioning;
      if (freshShipped.length < count && !provisionDry)
        await provision({ pending: 0, shipped: Math.max(count, PROVISION_BATCH) });
      if (freshShipped.length >= count) return freshShipped.splice(0, count);
      if (allShipped.length === 0) return [];
      return Array.from({ length: count }, (_, at) => allShipped[at % allShipped.length] as string);
    },
    async release(orderIds) {
      const done = orderIds.filter((id) => !givenShipped.has(id));
      if (hooks.release === undefined || done.length === 0) return;
      toRelease.push(...done);
      // One call at a time: histories that end while one is out are released together by the next.
      while (toRelease.includes(done[0] as string) || releasing !== undefined) {
        if (releasing === undefined) {
          const batch = toRelease.splice(0);
          releasing = runHook("release", () => hooks.release?.(context, batch), secrets).finally(() => {
            releasing = undefined;
          });
        }
        await releasing;
        if (!toRelease.includes(done[0] as string)) return;
      }
    },
    missing: [...new Set(given.missing)],
    pendingLimit: hooks.provision === undefined ? pending.length : Number.POSITIVE_INFINITY,
    get hasShipped() {
      return allShipped.length > 0 || hooks.provision !== undefined;
    },
    get used() {
      return used;
    },
  };
}

function provisioned(got: ProvisionedOrders | undefined): OrderIds {
  return {
    pending: checkedIds(got?.pending, "the provision hook's pending", HookError),
    shipped: checkedIds(got?.shipped, "the provision hook's shipped", HookError),
    missing: [],
  };
}
