import { setMaxListeners } from "node:events";
import type { History } from "../model/history.ts";
import { checkHistory, commonChoices, type HistoryVerdict } from "../model/linearizability.ts";
import { ALL_RUN_CHOICES, cancelStatusDecides, type RunChoices } from "../model/spec-model.ts";
import { HookError } from "../target/hooks.ts";
import { type Driver, HistoryCut, playProgram } from "./driver.ts";
import type { OrderSupply } from "./orders.ts";
import { type Program, slotsUsed } from "./program.ts";
import type { SearchSettings } from "./search.ts";

/** A program as it was played once: its history and the checker's verdict on it. */
export interface PlayedHistory {
  program: Program;
  history: History;
  verdict: HistoryVerdict;
}

/** What a search did, so that a pass is not read as more than it was. */
export interface ExploreCoverage {
  histories: number;
  operations: number;
  /** Pending orders used (each in one history). */
  orders: number;
  /** Most clients of one history. */
  clients: number;
  /** Pairs of operations on one order that overlapped in time. */
  concurrentPairs: number;
  /** Lists that overlapped a cancel of one of the run's orders. */
  listsConcurrentWithCancels: number;
  /** Lists sent, and those read whole (a 200 whose orders all have int64 ids): only these say what exists. */
  lists: number;
  listsReadWhole: number;
  /** Cancels sent, and those whose answer the model decides by (204, 404, 409, 401). */
  cancels: number;
  cancelsDecided: number;
  /** Answers of 401 to the run's own key, accepted at the start. */
  keyRefused: number;
}

/** A combination of the run's open choices that a history of the run cannot be explained under, at any staleness. */
export interface ChoiceRuledOut {
  choices: RunChoices;
  history: History;
}

// Node's default: past it, a warning of a leak is printed.
const WAITING_LISTENERS = 10;

/** Why orders stopped coming: the time was up while provisioning, or there were no more. */
export function outOf(deadline: number): "budget" | "orders" {
  return performance.now() >= deadline ? "budget" : "orders";
}

/**
 * Plays programs on fresh orders and counts what they covered. The run's open choices are decided once:
 * each history narrows them to those that explain it at any staleness, and every later history is judged
 * under what is left, so a stale read counts even in a history that does not itself show whether
 * cancelled orders stay.
 *
 * The first error of a run, or of a hook behind the histories, halts them all: no history starts and no
 * step is sent after it, and it is thrown to whoever plays next.
 */
export class Player {
  #choices: readonly RunChoices[] = ALL_RUN_CHOICES;
  readonly #ruledOut: ChoiceRuledOut[] = [];
  readonly #halt = new AbortController();
  readonly #halted: AbortSignal;
  readonly #driver: Driver;
  /** Aborted by the search's stop signal or once halted: no history asks for orders after it. */
  readonly stop: AbortSignal;
  /** The largest staleness a list of the search needed. */
  largestStaleMs = 0;

  constructor(
    driver: Driver,
    private readonly supply: OrderSupply,
    private readonly settings: SearchSettings,
    private readonly coverage: ExploreCoverage,
  ) {
    const halted = AbortSignal.any([this.#halt.signal, supply.broken]);
    this.#halted = halted;
    this.stop = settings.stop ? AbortSignal.any([halted, settings.stop]) : halted;
    // Each history waiting for orders listens for the stop: as many at once as are played at once.
    setMaxListeners(Math.max(WAITING_LISTENERS, settings.parallel), this.stop);
    // Asked before every step: a halted run's histories send nothing more.
    const pace = () => {
      halted.throwIfAborted();
      return driver.pace()?.then(() => halted.throwIfAborted());
    };
    this.#driver = { ...driver, pace };
  }

  get halted(): boolean {
    return this.#halted.aborted;
  }

  /** The error that halted the run, if one did. */
  get failure(): unknown {
    return this.#halted.aborted ? this.#halted.reason : undefined;
  }

  throwFailure(): void {
    this.#halted.throwIfAborted();
  }

  /**
   * One run of a program on orders no earlier run cancelled, starting no step past `until`; undefined
   * when the orders are used up, or `ordersUntil` passed or the stop came while more were being provisioned.
   */
  async play(program: Program, until?: number, ordersUntil = until): Promise<PlayedHistory | undefined> {
    try {
      return await this.#play(program, until, ordersUntil);
    } catch (error) {
      this.#halt.abort(error);
      throw error;
    }
  }

  async #play(program: Program, until?: number, ordersUntil?: number): Promise<PlayedHistory | undefined> {
    const kinds = this.settings.shape.slots.kinds;
    const used = slotsUsed(program);
    const pendingSlots = used.filter((slot) => kinds[slot] === "pending");
    const shippedSlots = used.filter((slot) => kinds[slot] === "shipped");
    const pending = await this.supply.pending(pendingSlots.length, ordersUntil, this.stop);
    if (pending === undefined) return undefined;
    const shipped = await this.supply.shipped(shippedSlots.length, ordersUntil, this.stop);
    if (shipped === undefined) {
      await this.supply.release(pending);
      return undefined;
    }
    const ids: (string | undefined)[] = kinds.map(() => undefined);
    pendingSlots.forEach((slot, at) => {
      ids[slot] = pending[at];
    });
    shippedSlots.forEach((slot, at) => {
      ids[slot] = shipped[at];
    });
    const missingSlot = kinds.indexOf("missing");
    if (missingSlot !== -1) ids[missingSlot] = this.supply.missing[0];
    const orders = [...pending, ...shipped];
    let history: History;
    try {
      history = await playProgram(this.#driver, program, { kinds, ids }, until);
    } catch (error) {
      // A history cut short gives its orders back all the same, when the hook still can.
      this.supply.release(orders).catch(() => {});
      return this.#cutShort(program, error, pending.length);
    }
    const played = this.#judge(program, history, pending.length);
    const { verdict } = played;
    try {
      await this.supply.release(orders);
    } catch (error) {
      // A hook's error (maybe an earlier release's, thrown to this caller) halts the run, but a failing
      // history played before it stands: the search reports it with the hook's error as a warning.
      if (verdict.ok || !(error instanceof HookError)) throw error;
      this.#halt.abort(error);
    }
    return played;
  }

  #judge(program: Program, history: History, orders: number): PlayedHistory {
    const verdict = checkHistory(history, {
      allowStaleMs: this.settings.allowStaleMs,
      choices: this.#choices,
    });
    this.#narrowChoices(history, verdict);
    this.largestStaleMs = Math.max(this.largestStaleMs, verdict.largestStaleMs);
    this.#count(program, history, verdict, orders);
    return { program, history, verdict };
  }

  /**
   * A history a hook's failure cut short is judged on the steps it had answered: a failure in them is a
   * finding, which the search reports with the hook's error as a warning. Otherwise the error is thrown.
   */
  #cutShort(program: Program, error: unknown, orders: number): PlayedHistory {
    if (!(error instanceof HistoryCut)) throw error;
    if (!(error.reason instanceof HookError)) throw error.reason;
    const played = this.#judge(program, error.history, orders);
    if (played.verdict.ok) throw error.reason;
    return played;
  }

  /** The run's choices still possible, and for each one ruled out, the history that ruled it out. */
  get choices(): { possible: readonly RunChoices[]; ruledOut: readonly ChoiceRuledOut[] } {
    return { possible: this.#choices, ruledOut: this.#ruledOut };
  }

  #narrowChoices(history: History, verdict: HistoryVerdict): void {
    const narrowed = commonChoices(this.#choices, verdict.consistentChoices);
    for (const choices of this.#choices)
      if (!narrowed.includes(choices)) this.#ruledOut.push({ choices, history });
    this.#choices = narrowed;
  }

  #count(program: Program, history: History, verdict: HistoryVerdict, orders: number): void {
    const coverage = this.coverage;
    coverage.histories++;
    coverage.operations += history.operations.length;
    coverage.orders += orders;
    coverage.clients = Math.max(coverage.clients, program.length);
    coverage.concurrentPairs += verdict.coverage.concurrentPairs;
    coverage.listsConcurrentWithCancels += verdict.coverage.listsConcurrentWithCancels;
    for (const operation of history.operations) {
      if (operation.status === 401) coverage.keyRefused++;
      if (operation.op === "list") {
        coverage.lists++;
        if (operation.shown !== null) coverage.listsReadWhole++;
      } else {
        coverage.cancels++;
        if (cancelStatusDecides(operation.status)) coverage.cancelsDecided++;
      }
    }
  }

  /**
   * Up to `times` runs of one program, `parallel` under way at once: each run that ends makes way for the
   * next, so that none waits on a round's slowest; the first that fails starts no more, and is returned
   * once those under way are over. Shrinking plays nothing else meanwhile: a defect that crosses
   * histories (a list shifted by another history's cancel) is then one this program shows.
   * Undefined when the orders ran out first.
   */
  async firstFailure(
    program: Program,
    times: number,
    until: number,
  ): Promise<PlayedHistory | "passed" | undefined> {
    let started = 0;
    let failed: PlayedHistory | undefined;
    let starved = false;
    const worker = async () => {
      while (started < times && failed === undefined && !starved && !this.halted) {
        started++;
        const played = await this.play(program, until);
        if (played === undefined) starved = true;
        else if (!played.verdict.ok) failed ??= played;
      }
    };
    await Promise.allSettled(Array.from({ length: Math.min(this.settings.parallel, times) }, worker));
    this.throwFailure();
    if (failed !== undefined) return failed;
    return starved ? undefined : "passed";
  }

  /**
   * The program played `times` times at once, each run on orders of its own; the error that halted one
   * is thrown once all are over.
   */
  async playMany(
    program: Program,
    times: number,
    until?: number,
    ordersUntil = until,
  ): Promise<(PlayedHistory | undefined)[]> {
    const runs = await Promise.allSettled(
      Array.from({ length: times }, () => this.play(program, until, ordersUntil)),
    );
    this.throwFailure();
    return runs.map((run) => (run.status === "fulfilled" ? run.value : undefined));
  }
}
