import { writeWholeFile } from "../../common/whole-file.ts";

// A burst of changes is written once, this long after it stops, and never later than MAX_WAIT_MS after it began.
const SETTLE_MS = 200;
const MAX_WAIT_MS = 2_000;

export interface StateSaver {
  /** A change was made; the file is written once changes settle. */
  changed(): void;
  /**
   * Writes now if anything changed since the last write (at shutdown). False when the file could not be
   * written: said in one line, and the changes since its last write are lost.
   */
  flush(): boolean;
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

  /** Writes the state if it changed; false when it could not. Said once per run of failures, and always at stop. */
  const write = (atStop: boolean): boolean => {
    timer = undefined;
    if (!dirty) return true;
    dirty = false;
    try {
      // Only the owner reads it: it holds the world as sessions left it.
      writeWholeFile(file, encode(), 0o600);
      if (failing && !atStop) onError(`state file ${file} written again`);
      failing = false;
      return true;
    } catch (error) {
      dirty = true;
      const reason = (error as NodeJS.ErrnoException).code ?? String(error);
      if (atStop) {
        onError(
          `error: cannot write the state file ${file} at stop: ${reason}; the changes since its last write are lost`,
        );
      } else if (!failing) {
        onError(`cannot write the state file ${file}: ${reason}`);
      }
      failing = true;
      return false;
    }
  };
  const tick = () => {
    const now = Date.now();
    if (now - lastChange >= SETTLE_MS || now - firstChange >= MAX_WAIT_MS) write(false);
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
      return write(true);
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
