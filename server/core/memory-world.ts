import type { OperationId } from "../../contract/types.ts";
import { type BehaviourState, noBehaviour, takeRule } from "./behaviour.ts";
import type { PiecedBody } from "./exchange.ts";
import { createJournal, type Journal, type JournalRecord } from "./journal.ts";
import type { OrdersPage, OrdersQuery } from "./order-page.ts";
import type { SeedOrder } from "./order-record.ts";
import type { CancelOutcome, OrderStatus } from "./order-status.ts";
import type { Seed } from "./seed.ts";
import { createStore, type PutOutcome, type Store } from "./store.ts";
import type { Arrangement, BatchOutcome, World } from "./world.ts";

/** Told of every change to a world's orders or rules, and of each journal entry, so a state file knows when to write. */
export type ChangeListener = (what: "state" | "journal") => void;

/** A world in this process's memory: every step answers at once. */
export class MemoryWorld implements World {
  readonly store: Store;
  readonly journalRing: Journal;
  lastUsed: number;
  private behaviourState: BehaviourState = noBehaviour();
  // The answer for a world without rules, made once per behaviour so the list path allocates nothing.
  private unruled: Arrangement = { delayMs: 0 };

  constructor(
    readonly session: string | null,
    private readonly currentSeed: () => Seed,
    journalSize: number,
    now: number,
    private readonly changed?: ChangeListener,
    // What this world's orders may hold beyond the seed (--max-memory); unbounded when absent.
    private readonly maxBytes?: number,
  ) {
    this.store = createStore(currentSeed());
    this.journalRing = createJournal(journalSize);
    this.lastUsed = now;
  }

  /** What this world holds beyond the shared seed, about: changed orders, its own list body, its journal. */
  get heldBytes(): number {
    return this.store.heldBytes + this.journalRing.heldBytes;
  }

  arrange(operation: OperationId | undefined): Arrangement {
    if (operation === undefined || this.behaviourState.rules.length === 0) return this.unruled;
    const rule = takeRule(this.behaviourState, operation);
    if (!rule) return this.unruled;
    this.changed?.("state");
    return { rule, delayMs: this.behaviourState.delayMs };
  }
  listBody(): Uint8Array | PiecedBody {
    return this.store.listBody();
  }
  cancel(id: bigint): CancelOutcome {
    const outcome = this.store.cancel(id);
    if (outcome === "cancelled") this.changed?.("state");
    return outcome;
  }
  page(query: OrdersQuery): OrdersPage | undefined {
    return this.store.page(query);
  }
  controlOrderJson(id: bigint): string | undefined {
    return this.store.controlOrderJson(id);
  }
  setStatus(id: bigint, status: OrderStatus): boolean {
    return this.noting(this.store.setStatus(id, status));
  }
  putOrder(order: SeedOrder): PutOutcome {
    const outcome = this.store.putOrder(order, this.maxBytes);
    if (outcome !== "full") this.changed?.("state");
    return outcome;
  }
  removeOrder(id: bigint): boolean {
    return this.noting(this.store.removeOrder(id));
  }
  applyBatch(create: readonly SeedOrder[], remove: readonly bigint[]): BatchOutcome {
    const created = this.store.createOrders(create, this.maxBytes);
    if (created === "full") return "full";
    const removed = remove.filter((id) => this.store.removeOrder(id)).map(String);
    this.noting(created.length + removed.length > 0);
    return { created, removed };
  }
  reset(): void {
    this.store.reset(this.currentSeed());
    this.setBehaviour(noBehaviour());
  }
  behaviour(): BehaviourState {
    return this.behaviourState;
  }
  setBehaviour(behaviour: BehaviourState): void {
    this.behaviourState = behaviour;
    this.unruled = { delayMs: behaviour.delayMs };
    this.changed?.("state");
  }
  record(entry: JournalRecord): void {
    this.journalRing.record(entry);
    this.changed?.("journal");
  }
  journal(): JournalRecord[] {
    return this.journalRing.entries();
  }
  clearJournal(): void {
    this.journalRing.clear();
    this.changed?.("journal");
  }

  private noting(done: boolean): boolean {
    if (done) this.changed?.("state");
    return done;
  }
}
