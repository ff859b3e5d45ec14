import { FileRefused, readBoundedFile } from "../../common/bounded-file.ts";
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
   * `count` pending orders never handed out before, or undefined when there are no longer that many, or
   * when `until` (a performance.now() instant) passed or `stop` was aborted while the provision hook was
   * asked for more (the call is left behind, never awaited past them).
   */
  pending(count: number, until?: number, stop?: AbortSignal): Promise<string[] | undefined>;
  /** `count` shipped orders (none when none were given); undefined when `until` or `stop` came first. */
  shipped(count: number, until?: number, stop?: AbortSignal): Promise<string[] | undefined>;
  readonly missing: readonly string[];
  readonly hasShipped: boolean;
  /** Pending orders the run can ever have: those given, or unbounded with a provision hook. */
  readonly pendingLimit: number;
  /**
   * A history's orders, once it is over: the release hook, when there is one, may remove its pending
   * orders and the shipped ones provisioned for it (shipped orders given are kept, to be handed out again).
   */
  release(orderIds: readonly string[]): Promise<void>;
  /**
   * Once the search is over: every release done, the pending orders provisioned and never handed out
   * released too; throws the release hook's error when one of its calls failed, and a HookError when a
   * provision or release call is still out `grace.ms` after settle was called (`grace.name` names it).
   */
  settle(grace?: { ms: number; name: string }): Promise<void>;
  /** Aborted, with the hook's error, as soon as a call made behind the histories fails. */
  readonly broken: AbortSignal;
  /** Pending orders handed out so far. */
  readonly used: number;
}

// Asked of a provision hook at once, so that a run does not call it once per history; few, since orders
// waiting for a history lengthen every list.
const PROVISION_BATCH = 8;
// Fewer pending orders waiting than this, and the next batch is asked for before a history needs it.
const PROVISION_AHEAD = 4;
// The same for shipped orders, once a history has asked for one: most histories name the shipped slot.
const SHIPPED_AHEAD = 2;
// Orders of ended histories held back until this many, so that a release call carries several histories'
// orders: each control request costs the target and the run about as much as several operations.
export const RELEASE_BATCH = 16;
// A run uses each pending order once: at the local mock's fastest, a few hundred thousand orders take
// minutes. More ids would only hold memory (a string, a slot and a check entry each), so they are refused.
const MAX_IDS_FILE_BYTES = 16 * 1024 * 1024;
export const MAX_ORDER_IDS = 250_000;
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

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
  // A byte-order mark is how some editors begin a UTF-8 file: no part of the JSON.
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new ConformanceUsageError(`${flag} ${path} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ConformanceUsageError(
      `${flag} ${path} must hold { "pending": [...], "shipped": [...], "missing": [...] }`,
    );
  // JSON.parse keeps the last of a repeated key: the lists before it would be dropped without a word.
  const repeated = repeatedTopLevelKey(json);
  if (repeated !== undefined)
    throw new ConformanceUsageError(
      `${flag} ${path} names ${JSON.stringify(repeated)} twice: JSON keeps only the last, so give each list once`,
    );
  const record = value as Record<string, unknown>;
  // The arrays are this parse's own: checked in place, so that a file of a million ids is not copied.
  const field = (name: keyof OrderIds) =>
    checkedIds(record[name], `${flag} ${path}: ${name}`, ConformanceUsageError, true);
  const lengthOf = (name: keyof OrderIds) =>
    Array.isArray(record[name]) ? (record[name] as unknown[]).length : 0;
  const total = lengthOf("pending") + lengthOf("shipped") + lengthOf("missing");
  if (total > MAX_ORDER_IDS)
    throw new ConformanceUsageError(
      `${flag} ${path} holds ${total} ids, more than the ${MAX_ORDER_IDS} a run keeps: give fewer (a run uses each pending order once), or a --hooks module whose provision() makes them as the run needs`,
    );
  const ids = { pending: field("pending"), shipped: field("shipped"), missing: field("missing") };
  const twice = idListedTwice(ids);
  if (twice !== undefined) throw new ConformanceUsageError(`${flag} ${path}: ${twice}`);
  return ids;
}

/**
 * The first key the top-level object of `text` (valid JSON, an object) names twice, decoded; undefined
 * when none does.
 * Read by its characters: strings skipped whole, only keys at depth one kept.
 */
export function repeatedTopLevelKey(text: string): string | undefined {
  const keys = new Set<string>();
  let depth = 0;
  let expectKey = false;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x22) {
      const end = stringEnd(text, at);
      if (depth === 1 && expectKey) {
        const key = JSON.parse(text.slice(at, end + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
      at = end;
    } else if (code === 0x7b || code === 0x5b) {
      depth++;
      expectKey = code === 0x7b && depth === 1;
    } else if (code === 0x7d || code === 0x5d) depth--;
    else if (code === 0x2c && depth === 1) expectKey = true;
  }
  return undefined;
}

/** Where the JSON string opened by the quote at `start` closes. */
function stringEnd(text: string, start: number): number {
  for (let at = start + 1; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x5c) at++;
    else if (code === 0x22) return at;
  }
  return text.length - 1;
}

/** An id the file names twice (an order is in one state), said with both places; undefined when none is. */
function idListedTwice(ids: OrderIds): string | undefined {
  const names = ["pending", "shipped", "missing"] as const;
  // Each place as one number (its index and its list), so that a file of a million ids makes no strings.
  const seen = new Map<string, number>();
  const placeOf = (code: number) => `${names[code % 3]}[${Math.floor(code / 3)}]`;
  for (let kind = 0; kind < names.length; kind++) {
    const list = ids[names[kind] as keyof OrderIds];
    for (let at = 0; at < list.length; at++) {
      const id = list[at] as string;
      const before = seen.get(id);
      if (before !== undefined)
        return `id ${id} is listed twice, at ${placeOf(before)} and ${placeOf(at * 3 + kind)}: an order is in one state`;
      seen.set(id, at * 3 + kind);
    }
  }
  return undefined;
}

const INT64_MAX_DIGITS = "9223372036854775807";
const INT64_MIN_DIGITS = "9223372036854775808";

/**
 * An id's canonical digits (no leading zeros, no "-0"), or undefined when it is not a string of digits
 * within int64. By its text alone: a BigInt per id costs a million-id file more than its strings.
 */
export function canonicalInt64(id: unknown): string | undefined {
  if (typeof id !== "string" || !/^-?\d{1,20}$/.test(id)) return undefined;
  const sign = id.charCodeAt(0) === 0x2d ? 1 : 0;
  let start = sign;
  while (start < id.length - 1 && id.charCodeAt(start) === 0x30) start++;
  const digits = start === 0 ? id : id.slice(start);
  // Digits of the same length compare as numbers do.
  const most = sign === 1 ? INT64_MIN_DIGITS : INT64_MAX_DIGITS;
  if (digits.length > most.length || (digits.length === most.length && digits > most)) return undefined;
  if (digits === "0") return "0";
  return sign === 1 ? (start === 1 ? id : `-${digits}`) : digits;
}

/**
 * Ids as canonical digits, each an int64; absent is none. `owned`: the array is the caller's own to
 * rewrite, and is returned checked, rather than a copy.
 */
function checkedIds(
  value: unknown,
  where: string,
  Failure: new (message: string) => Error,
  owned = false,
): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Failure(`${where} must be an array of strings of digits`);
  const ids: string[] = owned ? value : new Array(value.length);
  for (let at = 0; at < value.length; at++) {
    const id: unknown = value[at];
    const canonical = canonicalInt64(id);
    if (canonical === undefined)
      throw new Failure(`${where}[${at}] must be a string of digits within int64 (got ${gotText(id)})`);
    ids[at] = canonical;
  }
  return ids;
}

/** A value as a message shows it: a string quoted, anything else named by its kind ("the number 2"). */
function gotText(value: unknown): string {
  const text =
    typeof value === "string"
      ? JSON.stringify(value)
      : `the ${value === null ? "null" : typeof value} ${String(value)}`;
  return text.slice(0, 40);
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
  return new OrderStock(given, hooks, context, secrets);
}

/**
 * Neither asking for orders nor giving them back holds up a history: the next batch is asked for while
 * enough are still waiting, and releases go out behind the histories, one call at a time with every
 * order that ended meanwhile. A hook's error is thrown to the next caller, or by `settle`.
 */
class OrderStock implements OrderSupply {
  // Waiting to be handed out. Given without a provision hook, duplicates are skipped as they come
  // (`#handedOut`) rather than removed up front: a set of a million ids given costs more than the ids.
  readonly #pending: string[];
  readonly #handedOut = new Set<string>();
  readonly #freshShipped: string[];
  // Handed out again once the fresh ones are used up: the shipped orders given, never those provisioned,
  // which are released with their history.
  readonly #givenShipped: readonly string[];
  // Every id offered so far, handed out or waiting: an id offered again is not a new order. Only a
  // provision hook offers more, so only then is it kept.
  readonly #offered: Set<string> | undefined;
  // Provisioned and not yet handed out: released by `settle` if no history takes them.
  readonly #provisionedPending = new Set<string>();
  readonly #toRelease: string[] = [];
  #releasing: Promise<void> | undefined;
  #provisioning: Promise<void> | undefined;
  #provisionDry: boolean;
  // A history asked for shipped orders: from then on they are provisioned ahead too.
  #shippedAsked = false;
  // The search is over: every order held back is released, however few.
  #settling = false;
  #failure: Error | undefined;
  readonly #broken = new AbortController();
  #used = 0;
  readonly missing: readonly string[];
  readonly pendingLimit: number;

  constructor(
    given: OrderIds,
    private readonly hooks: ConformanceHooks,
    private readonly context: HookContext,
    private readonly secrets: readonly string[],
  ) {
    this.#pending = hooks.provision === undefined ? [...given.pending] : [...new Set(given.pending)];
    this.#freshShipped = [...new Set(given.shipped)];
    this.#givenShipped = [...this.#freshShipped];
    this.#offered =
      hooks.provision === undefined ? undefined : new Set([...this.#pending, ...this.#givenShipped]);
    this.#provisionDry = hooks.provision === undefined;
    this.missing = [...new Set(given.missing)];
    this.pendingLimit =
      hooks.provision === undefined ? distinctAtMost(this.#pending, EXACT_LIMIT) : Number.POSITIVE_INFINITY;
  }

  get hasShipped(): boolean {
    return this.#givenShipped.length > 0 || this.hooks.provision !== undefined;
  }

  get used(): number {
    return this.#used;
  }

  get broken(): AbortSignal {
    return this.#broken.signal;
  }

  async pending(
    count: number,
    until = Number.POSITIVE_INFINITY,
    stop?: AbortSignal,
  ): Promise<string[] | undefined> {
    this.#throwFailure();
    while (this.#pending.length < count && !this.#provisionDry) {
      if (performance.now() >= until || stop?.aborted) return undefined;
      const wanted = { pending: Math.max(count, PROVISION_BATCH), shipped: 0 };
      if ((await settledWithin(this.#provision(wanted), until, stop)) === "late") return undefined;
    }
    const taken = this.#take(count);
    if (taken === undefined) return undefined;
    for (const id of taken) this.#provisionedPending.delete(id);
    this.#used += count;
    this.#provisionAhead();
    return taken;
  }

  /**
   * The next batch asked for, behind the histories, when fewer orders wait than a few histories take: one
   * call for both kinds, so that neither a history's pending nor its shipped orders wait on a round trip.
   */
  #provisionAhead(): void {
    if (this.#provisionDry || this.#provisioning !== undefined) return;
    const pending = this.#pending.length;
    const shipped = this.#shippedAsked ? this.#freshShipped.length : Number.POSITIVE_INFINITY;
    if (pending >= PROVISION_AHEAD && shipped >= SHIPPED_AHEAD) return;
    // A call for one kind takes the other too when it runs low: a history waiting for one kind would
    // otherwise wait for this call and then for one of its own.
    const wanted = {
      pending: pending < 2 * PROVISION_AHEAD ? PROVISION_BATCH : 0,
      shipped: shipped < 2 * SHIPPED_AHEAD ? PROVISION_BATCH : 0,
    };
    this.#provision(wanted).catch((error: Error) => this.#fail(error));
  }

  /**
   * `count` ids from the front of those waiting, none handed out before (a duplicate given is dropped);
   * undefined, taking none, when fewer are left.
   */
  #take(count: number): string[] | undefined {
    const taken = new Set<string>();
    let at = 0;
    while (taken.size < count && at < this.#pending.length) {
      const id = this.#pending[at++] as string;
      if (!this.#handedOut.has(id)) taken.add(id);
    }
    if (taken.size < count) {
      this.#pending.splice(0, at, ...taken);
      return undefined;
    }
    this.#pending.splice(0, at);
    for (const id of taken) this.#handedOut.add(id);
    return [...taken];
  }

  async shipped(
    count: number,
    until = Number.POSITIVE_INFINITY,
    stop?: AbortSignal,
  ): Promise<string[] | undefined> {
    this.#throwFailure();
    if (count > 0) this.#shippedAsked = true;
    while (this.#freshShipped.length < count && !this.#provisionDry && this.#provisioning !== undefined)
      if ((await settledWithin(this.#provisioning, until, stop)) === "late") return undefined;
    const wanted = { pending: 0, shipped: Math.max(count, PROVISION_BATCH) };
    if (this.#freshShipped.length < count && !this.#provisionDry)
      if ((await settledWithin(this.#provision(wanted), until, stop)) === "late") return undefined;
    if (this.#freshShipped.length >= count) {
      const taken = this.#freshShipped.splice(0, count);
      this.#provisionAhead();
      return taken;
    }
    const again = this.#givenShipped;
    if (again.length === 0) return [];
    return Array.from({ length: count }, (_, at) => again[at % again.length] as string);
  }

  async release(orderIds: readonly string[]): Promise<void> {
    this.#throwFailure();
    const given = new Set(this.#givenShipped);
    const done = orderIds.filter((id) => !given.has(id));
    if (this.hooks.release === undefined || done.length === 0) return;
    this.#toRelease.push(...done);
    if (this.#releaseDue()) this.#startReleasing();
  }

  async settle(grace = { ms: Number.POSITIVE_INFINITY, name: "" }): Promise<void> {
    const until = performance.now() + grace.ms;
    const within = `within ${grace.ms} ms (${grace.name}) of the search's end`;
    // The histories' orders held back go first, in a call of their own.
    this.#settling = true;
    if (this.#toRelease.length > 0) this.#startReleasing();
    const provisioning = this.#provisioning?.catch(() => {});
    if (provisioning && (await settledWithin(provisioning, until)) === "late")
      throw new HookError(`the provision hook did not return ${within}`);
    const unused = this.#pending.filter((id) => this.#provisionedPending.has(id));
    if (this.hooks.release !== undefined && unused.length > 0) {
      this.#pending.splice(0);
      this.#toRelease.push(...unused);
      this.#startReleasing();
    }
    while (this.#releasing !== undefined)
      if ((await settledWithin(this.#releasing, until)) === "late")
        throw new HookError(
          `the release hook did not return ${within}; orders given to it or waiting for it may be left in the deployment`,
        );
    this.#throwFailure();
  }

  /** Releases going out, unless they already are: the call under way takes what is queued next. */
  #startReleasing(): void {
    this.#releasing ??= this.#drainReleases().finally(() => {
      this.#releasing = undefined;
      // The search may have ended while the last call was out, leaving fewer than a batch to release.
      if (this.#releaseDue() && this.#failure === undefined) this.#startReleasing();
    });
  }

  /**
   * One release call at a time, each with every order queued while the one before was out, once a batch
   * is queued (or the search is over).
   */
  async #drainReleases(): Promise<void> {
    while (this.#releaseDue() && this.#failure === undefined) {
      const batch = this.#toRelease.splice(0);
      try {
        await runHook("release", () => this.hooks.release?.(this.context, batch), this.secrets);
      } catch (error) {
        this.#fail(error as Error);
      }
    }
  }

  #releaseDue(): boolean {
    return this.#toRelease.length >= (this.#settling ? 1 : RELEASE_BATCH);
  }

  /** Histories played at once ask together: one call at a time, the others wait for its orders and look again. */
  async #provision(wanted: ProvisionRequest): Promise<void> {
    if (this.#provisioning !== undefined) return this.#provisioning;
    this.#provisioning = this.#provisionNow(wanted);
    try {
      await this.#provisioning;
    } finally {
      this.#provisioning = undefined;
    }
  }

  async #provisionNow(wanted: ProvisionRequest): Promise<void> {
    const got = await runHook("provision", () => this.hooks.provision?.(this.context, wanted), this.secrets);
    const ids = provisioned(got);
    // Ids it gave before are refused: a hook that has nothing new has no more orders, else a run would ask forever.
    const offered = this.#offered;
    // Kept whenever there is a provision hook: none, and nothing is provisioned.
    if (offered === undefined) return;
    const fresh = (id: string) => {
      if (offered.has(id)) return false;
      offered.add(id);
      return true;
    };
    const newPending = ids.pending.filter(fresh);
    const newShipped = ids.shipped.filter(fresh);
    if (newPending.length === 0 && newShipped.length === 0) this.#provisionDry = true;
    for (const id of newPending) this.#provisionedPending.add(id);
    this.#pending.push(...newPending);
    this.#freshShipped.push(...newShipped);
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#broken.abort(error);
  }

  /** A hook's error from work done behind the histories, thrown once to whoever asks next. */
  #throwFailure(): void {
    const failure = this.#failure;
    if (failure === undefined) return;
    this.#failure = undefined;
    throw failure;
  }
}

/**
 * Whether `work` settled (its error thrown) before `until` (a performance.now() instant) or `stop`; when
 * not, it is left to go on unawaited, its outcome unheard.
 */
export async function settledWithin(
  work: Promise<unknown>,
  until: number,
  stop?: AbortSignal,
): Promise<"settled" | "late"> {
  if (stop?.aborted || performance.now() >= until) return "late";
  let timer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  const late = new Promise<"late">((resolve) => {
    // A timer can fire up to a millisecond before performance.now() reaches its instant (its clock counts
    // whole milliseconds): "late" is said only once `until` has passed, so that a caller reading the clock
    // after it sees the time up.
    const wait = () => {
      const delay = until - performance.now();
      if (delay <= 0) resolve("late");
      // Past setTimeout's largest delay the bound is as good as none.
      else if (delay <= MAX_TIMER_DELAY_MS) timer = setTimeout(wait, Math.ceil(delay));
    };
    wait();
    onStop = () => resolve("late");
    stop?.addEventListener("abort", onStop, { once: true });
  });
  try {
    return await Promise.race([work.then(() => "settled" as const), late]);
  } finally {
    clearTimeout(timer);
    if (onStop) stop?.removeEventListener("abort", onStop);
  }
}

// Pending orders given are counted one by one up to this many distinct: past it, only whether a program
// can have all its slots matters, and the ids given are as good a count.
const EXACT_LIMIT = 1_000;

/** How many distinct ids `ids` holds when at most `most`; else its length (at least `most`). */
function distinctAtMost(ids: readonly string[], most: number): number {
  const seen = new Set<string>();
  for (const id of ids) {
    seen.add(id);
    if (seen.size >= most) return ids.length;
  }
  return seen.size;
}

function provisioned(got: ProvisionedOrders | undefined): OrderIds {
  return {
    pending: checkedIds(got?.pending, "the provision hook's pending", HookError),
    shipped: checkedIds(got?.shipped, "the provision hook's shipped", HookError),
    missing: [],
  };
}
