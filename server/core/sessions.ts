import type { World } from "./world.ts";

/** The header naming the session a request plays in (lower case, as Node and the core see headers). */
export const SESSION_HEADER = "x-mock-session";
export const SESSION_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export interface SessionLimits {
  /** Past this many, the least recently used session is evicted. */
  maxSessions: number;
  /** A session unused for this long is evicted. */
  idleMs: number;
}

/** Named worlds, created on first use and evicted when idle or least recently used. */
export interface Sessions {
  /** The session's world, created on first use; using it makes it the most recent. */
  use(name: string, now: number): World;
  /** Live sessions, least recently used first. */
  list(now: number): World[];
  readonly size: number;
}

// Other sessions' idle time is looked at no more often than this; the session in use is always checked.
const SWEEP_INTERVAL_MS = 100;

export function createSessions(
  limits: SessionLimits,
  create: (name: string, now: number) => World,
): Sessions {
  // A Map iterates in insertion order: re-inserting on use keeps it ordered from least to most recent.
  const worlds = new Map<string, World>();
  let mostRecent: World | undefined;
  let lastSweep = 0;
  const evictIdle = (now: number) => {
    lastSweep = now;
    for (const [name, world] of worlds) {
      if (now - world.lastUsed <= limits.idleMs) break;
      worlds.delete(name);
      if (world === mostRecent) mostRecent = undefined;
    }
  };
  return {
    get size() {
      return worlds.size;
    },
    use(name, now) {
      if (now - lastSweep >= SWEEP_INTERVAL_MS) evictIdle(now);
      // A client sending request after request in one session is the common case: nothing to reorder.
      if (mostRecent?.session === name && now - mostRecent.lastUsed <= limits.idleMs) {
        mostRecent.lastUsed = now;
        return mostRecent;
      }
      let world = worlds.get(name);
      if (world) worlds.delete(name);
      if (!world || now - world.lastUsed > limits.idleMs) {
        world = create(name, now);
        if (worlds.size >= limits.maxSessions) {
          const oldest = worlds.keys().next();
          if (!oldest.done) worlds.delete(oldest.value);
        }
      }
      world.lastUsed = now;
      worlds.set(name, world);
      mostRecent = world;
      return world;
    },
    list(now) {
      evictIdle(now);
      return [...worlds.values()];
    },
  };
}
