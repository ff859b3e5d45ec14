import type { SessionLimits, SessionSummary, SessionsPage, SessionsQuery } from "./world.ts";

export { SESSION_HEADER, SESSION_NAME } from "../../contract/session.ts";

/** What sessions need of a world kept in memory. */
export interface LiveWorld {
  readonly session: string | null;
  lastUsed: number;
  /** What the world holds beyond the shared seed, about; counted against SessionLimits.maxBytes. */
  readonly heldBytes?: number;
}

/** Named worlds in memory, created on first use and evicted when idle or least recently used. */
export interface Sessions<W extends LiveWorld> {
  /** The session's world, created on first use; using it makes it the most recent. */
  use(name: string, now: number): W;
  /** Live sessions, least recently used first. */
  list(now: number): W[];
  /** Puts back a world read from a state file, as the most recent. */
  restore(world: W): void;
  readonly size: number;
}

// Other sessions' idle time is looked at no more often than this; the session in use is always checked.
const SWEEP_INTERVAL_MS = 100;

export function createSessions<W extends LiveWorld>(
  limits: SessionLimits,
  create: (name: string, now: number) => W,
): Sessions<W> {
  // A Map iterates in insertion order: re-inserting on use keeps it ordered from least to most recent.
  const worlds = new Map<string, W>();
  let mostRecent: W | undefined;
  let lastSweep = 0;
  const evictIdle = (now: number) => {
    lastSweep = now;
    for (const [name, world] of worlds) {
      if (now - world.lastUsed <= limits.idleMs) break;
      worlds.delete(name);
      if (world === mostRecent) mostRecent = undefined;
    }
  };
  const admit = (name: string, world: W) => {
    if (worlds.size >= limits.maxSessions) {
      const oldest = worlds.keys().next();
      if (!oldest.done) worlds.delete(oldest.value);
    }
    worlds.set(name, world);
  };
  // Past the bytes all sessions may hold, the least recently used go, never the one in use: looked at as
  // other sessions' idle time is, so a request pays for it at most once per sweep.
  const evictOverBudget = (inUse: W | undefined) => {
    if (limits.maxBytes === undefined) return;
    let held = 0;
    for (const world of worlds.values()) held += world.heldBytes ?? 0;
    for (const [name, world] of worlds) {
      if (held <= limits.maxBytes) return;
      if (world === inUse) continue;
      held -= world.heldBytes ?? 0;
      worlds.delete(name);
      if (world === mostRecent) mostRecent = undefined;
    }
  };
  return {
    get size() {
      return worlds.size;
    },
    use(name, now) {
      if (now - lastSweep >= SWEEP_INTERVAL_MS) {
        evictIdle(now);
        evictOverBudget(worlds.get(name));
      }
      // A client sending request after request in one session is the common case: nothing to reorder.
      if (mostRecent?.session === name && now - mostRecent.lastUsed <= limits.idleMs) {
        mostRecent.lastUsed = now;
        return mostRecent;
      }
      let world = worlds.get(name);
      if (world) worlds.delete(name);
      if (!world || now - world.lastUsed > limits.idleMs) world = create(name, now);
      world.lastUsed = now;
      admit(name, world);
      evictOverBudget(world);
      mostRecent = world;
      return world;
    },
    list(now) {
      evictIdle(now);
      return [...worlds.values()];
    },
    restore(world) {
      if (world.session === null) return;
      worlds.delete(world.session);
      admit(world.session, world);
    },
  };
}

/** The page of these sessions that a query asks for, in name order. */
export function pageOfSessions(
  live: readonly SessionSummary[],
  { after, limit }: SessionsQuery,
): SessionsPage {
  const named = [...live].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let start = 0;
  if (after !== undefined) {
    // The first name after `after`, found by halving: `after` need not be a live session's.
    let end = named.length;
    while (start < end) {
      const middle = (start + end) >>> 1;
      if ((named[middle] as SessionSummary).name <= after) start = middle + 1;
      else end = middle;
    }
  }
  const sessions = named.slice(start, start + limit);
  const last = sessions.at(-1);
  return start + limit < named.length && last
    ? { sessions, next: last.name, total: named.length }
    : { sessions, total: named.length };
}
