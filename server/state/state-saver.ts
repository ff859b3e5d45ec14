import { writeWholeFile } from "../../common/whole-file.ts";

// A burst of changes is written once, this long after it stops, and never later than MAX_WAIT_MS after it began.
const SETTLE_MS = 200;
const MAX_WAIT_MS = 2_000;

export interface StateSaver {
  /** A change was made; the file is written once changes settle. */
  changed(): void;
  /** Writes now if anything changed since the last write (at shutdown). */
  flush(): void;
  stop(): void;
}

export function createStateSaver(
  file: string,
  encode: () => string,
  onError: (message: string) => void,
): StateSaver {
  let dirty = false;
  let firstChange = 0;
  let lastChange = 0;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;

  const write = () => {
    timer = undefined;
    if (!dirty) return;
    dirty = false;
    try {
      // Only the owner reads it: it holds the world as sessions left it.
      writeWholeFile(file, encode(), 0o600);
      if (failing) onError(`state file ${file} written again`);
      failing = false;
    } catch (error) {
      dirty = true;
      // Said once per run of failures, not once per change.
      if (!failing)
        onError(`cannot write the state file ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
      failing = true;
    }
  };
  const tick = () => {
    const now = Date.now();
    if (now - lastChange >= SETTLE_MS || now - firstChange >= MAX_WAIT_MS) write();
    else timer = setTimeout(tick, SETTLE_MS - (now - lastChange)).unref();
  };
  return {
    changed() {
      const now = Date.now();
      lastChange = now;
      if (!dirty) firstChange = now;
      dirty = true;
      timer ??= setTimeout(tick, SETTLE_MS).unref();
    },
    flush() {
      if (timer) clearTimeout(timer);
      write();
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
