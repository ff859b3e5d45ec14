import { type ChangeListener, MemoryWorld } from "./memory-world.ts";
import type { Seed } from "./seed.ts";
import { createSessions, pageOfSessions, type Sessions } from "./sessions.ts";
import type { SessionLimits, StateStore } from "./world.ts";

/** The default state store: every world in this process's memory, nothing shared, nothing kept. */
export interface MemoryState extends StateStore {
  readonly defaultWorld: MemoryWorld;
  readonly memorySessions: Sessions<MemoryWorld>;
  /** A new world over the current seed, for a state file to fill in. */
  createWorld(session: string | null, now: number): MemoryWorld;
  /** The fixtures worlds are seeded from now. */
  seed(): Seed;
}

export function createMemoryState(
  initialSeed: Seed,
  limits: SessionLimits,
  journalSize: number,
  now: number,
  changed?: ChangeListener,
): MemoryState {
  let seed = initialSeed;
  const currentSeed = () => seed;
  const createWorld = (session: string | null, at: number) =>
    new MemoryWorld(session, currentSeed, journalSize, at, changed, limits.maxBytes);
  const defaultWorld = createWorld(null, now);
  const memorySessions = createSessions(limits, createWorld);
  return {
    description: "memory",
    defaultWorld,
    memorySessions,
    createWorld,
    seed: currentSeed,
    session: (name, at) => memorySessions.use(name, at),
    // In memory every live session is at hand, at most --max-sessions of them: sorted for each page.
    sessions: (at, query) =>
      pageOfSessions(
        memorySessions.list(at).map((world) => ({
          name: world.session as string,
          orders: world.store.size,
          changes: world.store.changes,
          lastUsed: world.lastUsed,
        })),
        query,
      ),
    reload(next) {
      seed = next;
      defaultWorld.store.reset(next);
      changed?.("state");
    },
    healthy: () => true,
    unreachable: () => false,
    close: async () => {},
  };
}
