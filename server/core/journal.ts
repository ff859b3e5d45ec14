import type { JournalEntry } from "../../contract/types.ts";

/** A journal entry of control.openapi.yaml, its time kept in milliseconds until the journal is read. */
export type JournalRecord = Omit<JournalEntry, "time"> & { time: number };

/** The latest requests of one world, oldest first, in a ring of fixed size. */
export interface Journal {
  record(entry: JournalRecord): void;
  entries(): JournalRecord[];
  clear(): void;
}

export function createJournal(capacity: number): Journal {
  let ring: JournalRecord[] = [];
  let next = 0;
  return {
    record(entry) {
      if (capacity === 0) return;
      if (ring.length < capacity) ring.push(entry);
      else ring[next] = entry;
      next = (next + 1) % capacity;
    },
    entries() {
      return ring.length < capacity ? ring.slice() : [...ring.slice(next), ...ring.slice(0, next)];
    },
    clear() {
      ring = [];
      next = 0;
    },
  };
}

export function journalJson(entries: readonly JournalRecord[]): string {
  return JSON.stringify(entries.map((entry) => ({ ...entry, time: new Date(entry.time).toISOString() })));
}
