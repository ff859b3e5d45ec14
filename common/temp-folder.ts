import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

/**
 * A fresh folder under the system's temporary directory, removed with everything in it when the process
 * exits: test files and benchmarks make many (fixtures, state files, FIFOs, a million-order list) and none
 * should outlive its run. Processes started in it must be stopped before then.
 */
export function tempFolder(prefix: string): string {
  if (made.length === 0) process.once("exit", removeAll);
  const folder = mkdtempSync(join(tmpdir(), prefix));
  made.push(folder);
  return folder;
}

function removeAll(): void {
  for (const folder of made.splice(0)) {
    try {
      rmSync(folder, { recursive: true, force: true });
    } catch {
      // Best effort: a folder still in use is left to the system's own cleaning.
    }
  }
}

/**
 * A fresh folder under the system's temporary directory that the caller removes itself at once after use
 * (a proxy's spill file is made in one, then both unlinked): not kept for the exit, so that many cost nothing.
 */
export function shortLivedFolder(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
