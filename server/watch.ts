import { watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";

// Editors save in several steps (truncate, write, rename); one reload after the burst settles.
export const WATCH_DEBOUNCE_MS = 150;

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
