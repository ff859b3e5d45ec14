import { setTimeout as sleep } from "node:timers/promises";
import type { Exchange } from "../judging/exchange.ts";
import type { ListVerdict } from "../judging/list-judge.ts";
import type { History, HistoryOperation } from "../model/history.ts";
import { cancelStatusDecides } from "../model/spec-model.ts";
import type { ListsNotJudged } from "../reports/outcome.ts";
import type { HttpClient } from "../target/http-client.ts";
import type { Program, SlotKind } from "./program.ts";
import type { WatchedLists } from "./watched-list.ts";

/** What every run of a search shares: the way to the target and how a list is read. */
export interface Driver {
  client: HttpClient;
  apiKey: string;
  /** How lists are read: the model needs whether each was whole, with exact ids, and the watched records. */
  lists: WatchedLists;
  /**
   * Spaces requests to at most --max-rate a second, across every client and run: a promise to wait for,
   * or undefined when the request may go now (no await then, on every step).
   */
  pace: () => Promise<void> | undefined;
  /** Why answers said nothing the model can judge: for a run that judged none of its lists or cancels. */
  unjudged: UnjudgedAnswers;
  /** The answers awaited, given up on at the run's stop: a stop never waits on a target that drips. */
  inFlight: InFlight;
}

/** Answers awaited, each given up on (as none) once the stop comes. */
export class InFlight {
  readonly #waiting = new Set<() => void>();
  #stopped = false;
  readonly #giveUp = () => {
    this.#stopped = true;
    for (const give of this.#waiting) give();
    this.#waiting.clear();
  };

  constructor(private readonly stop?: AbortSignal) {
    if (stop?.aborted) this.#giveUp();
    else stop?.addEventListener("abort", this.#giveUp, { once: true });
  }

  /** The run is over: a stop signal reused by later runs keeps nothing of this one. */
  close(): void {
    this.stop?.removeEventListener("abort", this.#giveUp);
  }

  /**
   * Gives up, `ms` from now, on the answers then awaited (a 429 waited out past the budget), not on later
   * ones; the returned function calls it off.
   */
  giveUpAfter(ms: number): () => void {
    const timer = setTimeout(
      () => {
        for (const give of this.#waiting) give();
        this.#waiting.clear();
      },
      Math.max(0, ms),
    );
    return () => clearTimeout(timer);
  }

  /** The exchange, or undefined when the stop came first (the request is left to the client's close). */
  until(sending: Promise<Exchange>): Promise<Exchange | undefined> {
    if (this.#stopped) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const give = () => resolve(undefined);
      this.#waiting.add(give);
      sending.then(
        (exchange) => {
          this.#waiting.delete(give);
          resolve(exchange);
        },
        (error: unknown) => {
          this.#waiting.delete(give);
          reject(error);
        },
      );
    });
  }
}

/**
 * The first list not read whole, and why; the lists not read whole, by reason; the answers of cancels
 * that decide nothing, by status.
 */
export interface UnjudgedAnswers {
  firstUnreadList?: string;
  unreadLists?: Map<string, ListsNotJudged>;
  cancelAnswers: Map<string, number>;
}

/** The ids a run's slots hold: undefined for a slot it has no order for (its cancels are not sent). */
export interface SlotOrders {
  kinds: readonly SlotKind[];
  ids: readonly (string | undefined)[];
}

/**
 * A history the run's halt cut short (a hook failed behind it): the steps sent before the halt, each with
 * its answer, and the halt's reason. What it shows stands: a failure in it is a finding.
 */
export class HistoryCut extends Error {
  override name = "HistoryCut";
  constructor(
    readonly history: History,
    readonly reason: unknown,
  ) {
    super("the history was cut short", { cause: reason });
  }
}

/**
 * Plays one program: its clients at once, each step after its pause, every answer recorded with the
 * instants it was sent and complete, and for a list the run's orders it showed with their exact records.
 * No step starts once `until` (a performance.now() instant) has passed: the history ends with the steps
 * already sent. When the pacing refuses a step (the run halted), no client sends another, the answers
 * awaited are taken, and the history so far is thrown in a HistoryCut.
 */
export async function playProgram(
  driver: Driver,
  program: Program,
  slots: SlotOrders,
  until = Number.POSITIVE_INFINITY,
): Promise<History> {
  const watched = new Set(slots.ids.filter((id): id is string => id !== undefined));
  const records = new Records();
  const operations: HistoryOperation[] = [];
  const start = performance.now();
  const since = () => performance.now() - start;
  let cut: { reason: unknown } | undefined;
  await Promise.all(
    program.map(async (steps, client) => {
      for (const step of steps) {
        if (step.wait > 0) await sleep(step.wait);
        if (cut !== undefined) break;
        const orderId = step.action.op === "cancel" ? slots.ids[step.action.slot] : undefined;
        if (step.action.op === "cancel" && orderId === undefined) continue;
        try {
          const paced = driver.pace();
          if (paced !== undefined) await paced;
        } catch (reason) {
          cut ??= { reason };
          break;
        }
        if (performance.now() >= until || cut !== undefined) break;
        const sentAt = since();
        const operation =
          orderId === undefined
            ? await list(driver, watched, records, client, sentAt, since)
            : await cancel(driver, orderId, client, sentAt, since);
        operations.push(operation);
      }
    }),
  );
  operations.sort((a, b) => a.sentAt - b.sentAt);
  const history = { given: givenOf(slots), records: records.table, operations };
  if (cut !== undefined) throw new HistoryCut(history, cut.reason);
  return history;
}

function givenOf(slots: SlotOrders): History["given"] {
  const of = (kind: SlotKind) => [
    ...new Set(slots.ids.filter((id, at): id is string => id !== undefined && slots.kinds[at] === kind)),
  ];
  return { pending: of("pending"), shipped: of("shipped"), missing: of("missing"), unknown: [] };
}

function authorization(driver: Driver): Record<string, string> {
  return { authorization: `Bearer ${driver.apiKey}` };
}

/**
 * An answer's status as the model reads it; null for none. A 429 still refused after its retries is no
 * answer either: the deployment may or may not have done it, and the model allows both.
 */
function answered(status: number | undefined): number | null {
  return status === undefined || status === 429 ? null : status;
}

async function cancel(
  driver: Driver,
  orderId: string,
  client: number,
  sentAt: number,
  since: () => number,
): Promise<HistoryOperation> {
  const exchange = await driver.inFlight.until(
    driver.client.send("DELETE", `/store/orders/${orderId}`, authorization(driver)),
  );
  const status = answered(exchange?.response?.status);
  if (!cancelStatusDecides(status)) {
    const answers = driver.unjudged.cancelAnswers;
    const said = status === null ? "no answer" : String(status);
    answers.set(said, (answers.get(said) ?? 0) + 1);
  }
  return { op: "cancel", client, orderId, sentAt, answeredAt: status === null ? null : since(), status };
}

async function list(
  driver: Driver,
  watched: ReadonlySet<string>,
  records: Records,
  client: number,
  sentAt: number,
  since: () => number,
): Promise<HistoryOperation> {
  const exchange = await driver.inFlight.until(
    driver.client.send("GET", "/store/orders", authorization(driver), {
      listJudge: () => driver.lists.reading(watched),
    }),
  );
  const status = answered(exchange?.response?.status);
  const verdict = exchange?.response?.cut === undefined ? exchange?.response?.list : undefined;
  const shown =
    status === 200 && verdict && readWhole(verdict) ? shownOrders(verdict, watched, records) : null;
  if (shown === null) noteUnread(driver.unjudged, exchange, verdict);
  return { op: "list", client, sentAt, answeredAt: status === null ? null : since(), status, shown };
}

/**
 * Which of `ids` one list shows; when the list was not read whole (an error, a list past the reader's
 * limits), so that it says nothing about them, why not.
 */
export async function listedOf(driver: Driver, ids: readonly string[]): Promise<Set<string> | string> {
  const watched = new Set(ids);
  await driver.pace();
  const exchange = await driver.inFlight.until(
    driver.client.send("GET", "/store/orders", authorization(driver), {
      listJudge: () => driver.lists.reading(watched),
    }),
  );
  const verdict = exchange?.response?.cut === undefined ? exchange?.response?.list : undefined;
  if (exchange?.response?.status !== 200 || !verdict || !readWhole(verdict))
    return exampleOf(exchange, whyNotRead(exchange, verdict));
  return new Set(ids.filter((id) => verdict.records.has(id)));
}

/** A list not read whole: counted under its reason, the first of each reason kept as its example. */
function noteUnread(
  unjudged: UnjudgedAnswers,
  exchange: Exchange | undefined,
  verdict: ListVerdict | undefined,
) {
  const why = whyNotRead(exchange, verdict);
  unjudged.firstUnreadList ??= why.detail;
  unjudged.unreadLists ??= new Map();
  const known = unjudged.unreadLists.get(why.reason);
  if (known !== undefined) known.count++;
  else
    unjudged.unreadLists.set(why.reason, {
      reason: why.reason,
      count: 1,
      limit: why.limit,
      example: exampleOf(exchange, why),
    });
}

// Characters of a body an example shows: enough to see what the answer was instead of a list.
const EXAMPLE_BODY_CHARS = 160;

function exampleOf(exchange: Exchange | undefined, why: NotRead): string {
  const response = exchange?.response;
  if (exchange === undefined || response === undefined) return `GET /store/orders: ${why.detail}`;
  const body =
    why.showBody && response.body.length > 0
      ? `; its body began ${JSON.stringify(response.body.slice(0, EXAMPLE_BODY_CHARS))}`
      : "";
  const answered = `answered ${response.status}`;
  // A status alone is said once: "answered 503", not "answered 503: answered 503".
  const detail = why.detail === answered ? "" : `: ${why.detail}`;
  return `${exchange.request.method} ${exchange.request.path} ${answered}${detail}${body}`;
}

interface NotRead {
  /** What lists are counted under. */
  reason: string;
  /** This list's own words. */
  detail: string;
  /** A limit of the run's (the reader's bounds, --deadline, --max-body) kept it from being read whole. */
  limit: boolean;
  /** Its body's start says what it was instead of a list (an error's, text that is not JSON). */
  showBody?: boolean;
}

/** Why a list says nothing of which orders exist, in a few words. */
function whyNotRead(exchange: Exchange | undefined, verdict: ListVerdict | undefined): NotRead {
  const as = (reason: string, detail = reason, limit = false) => ({ reason, detail, limit });
  const bodySays = (reason: string, detail = reason) => ({ reason, detail, limit: false, showBody: true });
  if (exchange === undefined) return as("stopped before their answer");
  const response = exchange.response;
  // A coding this tool does not read, or more bodies decoding at once than the client's room holds: no
  // flag of the run's raises either, so they count as lists not read, not as a limit to raise.
  if (exchange.limit === "not-read")
    return as("not read (its Content-Encoding)", response?.cut ?? exchange.error ?? "not read");
  if (exchange.limit !== undefined)
    return as(
      `cut by ${exchange.limit}`,
      response?.cut ?? exchange.error ?? `cut by ${exchange.limit}`,
      true,
    );
  if (response === undefined) return as("no answer", exchange.error ?? "no answer");
  if (response.status !== 200) return bodySays(`answered ${response.status}`);
  if (response.cut !== undefined) return as("cut short", response.cut);
  if (verdict?.limit !== undefined)
    return as("past a reader's bound", `past the reader's ${verdict.limit.what} bound`, true);
  if (verdict?.syntax !== undefined) return bodySays("not JSON", `not JSON: ${verdict.syntax}`);
  if (verdict?.notArray !== undefined) return bodySays("no JSON array", "its body is no JSON array");
  if (verdict?.indexLimit !== undefined || verdict?.partial !== undefined)
    return as("judged only in part (a limit)", "judged only in part (a limit)", true);
  if (verdict !== undefined && verdict.unindexed > 0)
    return as(
      "some of their orders have no int64 id",
      `${verdict.unindexed} of its ${verdict.count} orders ${verdict.unindexed === 1 ? "has" : "have"} no int64 id`,
    );
  return as("not read whole");
}

/** A list says which orders exist only when it was read to its end as an array of orders with int64 ids. */
function readWhole(verdict: ListVerdict): boolean {
  return (
    verdict.syntax === undefined &&
    verdict.limit === undefined &&
    verdict.notArray === undefined &&
    verdict.indexLimit === undefined &&
    verdict.partial === undefined &&
    verdict.unindexed === 0
  );
}

function shownOrders(
  verdict: ListVerdict,
  watched: ReadonlySet<string>,
  records: Records,
): Map<string, number> {
  const shown = new Map<string, number>();
  // A watched order's record is kept exactly when it is listed with an int64 id.
  for (const id of watched) {
    const record = verdict.records.get(id);
    if (record !== undefined) shown.set(id, records.intern(record));
  }
  return shown;
}

/** Record texts, each kept once. */
class Records {
  readonly table: string[] = [];
  readonly #places = new Map<string, number>();

  intern(text: string): number {
    let place = this.#places.get(text);
    if (place === undefined) {
      place = this.table.length;
      this.table.push(text);
      this.#places.set(text, place);
    }
    return place;
  }
}

/** At most `perSecond` requests a second, spaced evenly; unbounded when undefined. */
export function pacing(perSecond: number | undefined): () => Promise<void> | undefined {
  if (perSecond === undefined) return () => undefined;
  const gap = 1000 / perSecond;
  let next = 0;
  return () => {
    const now = performance.now();
    const at = Math.max(now, next);
    next = at + gap;
    return at > now ? sleep(at - now) : undefined;
  };
}
