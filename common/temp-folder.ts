import { mkdtempSync, readdirSync, rmSync } from "node:fs";
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

/**
 * A folder as tempFolder makes, named after this process (`PREFIX` PID `-…`): the folders of the same prefix
 * whose process no longer runs (killed with SIGKILL, which no process outlives to clean up) are removed
 * first. Another user's are left: they cannot be removed, and are not ours to.
 */
export function processFolder(prefix: string): string {
  let names: string[] = [];
  try {
    names = readdirSync(tmpdir());
  } catch {
    // No listing: nothing left behind is removed this time.
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || runs(pid)) continue;
    try {
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
    } catch {
      // Another user's, or already gone.
    }
  }
  return tempFolder(`${prefix}${process.pid}-`);
}

function runs(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
