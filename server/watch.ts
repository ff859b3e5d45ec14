import { watch } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";

// Editors save in several steps (truncate, write, rename); one reload after the burst settles.
export const WATCH_DEBOUNCE_MS = 150;

/** How long a file read as invalid must stay as read before it is said to be: a writer may not be done. */
export const WATCH_SETTLE_MS = 1000;

/** What tells one version of the file from the next: its inode, size and change time; none when it is gone. */
export async function fileVersion(path: string): Promise<string | undefined> {
  try {
    const { ino, size, mtimeNs, ctimeNs } = await stat(path, { bigint: true });
    return `${ino}:${size}:${mtimeNs}:${ctimeNs}`;
  } catch {
    return undefined;
  }
}

/**
 * Calls `onChange` once after each burst of changes to the file. The folder is watched, not the file:
 * an editor that saves by writing a new file and renaming it over the old one replaces the watched inode.
 */
export function watchFile(path: string, onChange: () => void, debounceMs = WATCH_DEBOUNCE_MS): () => void {
  const file = basename(path);
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dirname(resolve(path)), (_event, name) => {
    if (name !== null && name !== file) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
