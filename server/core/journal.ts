import type { JournalEntry } from "../../contract/types.ts";

/** A journal entry of control.openapi.yaml, its time kept in milliseconds until the journal is read. */
export type JournalRecord = Omit<JournalEntry, "time"> & { time: number };

/** The latest requests of one world, oldest first, in a ring of fixed size. */
export interface Journal {
  /** What the entries hold, about (paths are kept by `journalPath`, so at most about 1.2 KB an entry). */
  readonly heldBytes: number;
  record(entry: JournalRecord): void;
  entries(): JournalRecord[];
  clear(): void;
}

// An entry's object, its time, method and status, beside its path.
const ENTRY_BYTES = 160;

/** Characters of a path a journal entry keeps, so that an entry costs at most about a kilobyte. */
export const MAX_JOURNAL_PATH = 512;

/**
 * The path as a journal entry keeps it: cut after MAX_JOURNAL_PATH characters (marked with `...`) and a
 * copy that owns its characters. V8 makes a slice of a long string (the path of a request's URL) a view
 * that keeps the whole parent alive, query string included, which the entry's size would not show. A
 * string joined to another and then cut is flattened into new storage first, so it holds only itself.
 */
export function journalPath(path: string): string {
  const kept = path.length > MAX_JOURNAL_PATH ? `${path.slice(0, MAX_JOURNAL_PATH)}...` : path;
  return ` ${kept}`.slice(1);
}

export function createJournal(capacity: number): Journal {
  let ring: JournalRecord[] = [];
  let next = 0;
  let bytes = 0;
  const cost = (entry: JournalRecord) => 2 * entry.path.length + ENTRY_BYTES;
  return {
    get heldBytes() {
      return bytes;
    },
    record(entry) {
      if (capacity === 0) return;
      bytes += cost(entry);
      if (ring.length < capacity) ring.push(entry);
      else {
        bytes -= cost(ring[next] as JournalRecord);
        ring[next] = entry;
      }
      next = (next + 1) % capacity;
    },
    entries() {
      return ring.length < capacity ? ring.slice() : [...ring.slice(next), ...ring.slice(0, next)];
    },
    clear() {
      ring = [];
      next = 0;
      bytes = 0;
    },
  };
}

export function journalJson(entries: readonly JournalRecord[]): string {
  return JSON.stringify(entries.map((entry) => ({ ...entry, time: new Date(entry.time).toISOString() })));
}
