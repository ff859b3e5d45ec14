import { type BehaviourState, noBehaviour } from "./behaviour.ts";
import { createJournal, type Journal } from "./journal.ts";
import type { Seed } from "./seed.ts";
import { createStore, type Store } from "./store.ts";

/** Everything one client sees and arranges: orders, behaviour rules and the request journal. */
export interface World {
  /** The session's name; null for the shared default world. */
  readonly session: string | null;
  readonly store: Store;
  behaviour: BehaviourState;
  readonly journal: Journal;
  lastUsed: number;
}

export function createWorld(session: string | null, seed: Seed, journalSize: number, now: number): World {
  return {
    session,
    store: createStore(seed),
    behaviour: noBehaviour(),
    journal: createJournal(journalSize),
    lastUsed: now,
  };
}

/** Back to the seed, rules cleared; the journal stays, since it records what happened, not state. */
export function resetWorld(world: World, seed: Seed): void {
  world.store.reset(seed);
  world.behaviour = noBehaviour();
}
