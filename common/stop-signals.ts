import { constants } from "node:os";

/** The signals that ask a command to stop: a terminal's Ctrl-C, a CI runner's or a supervisor's stop, a hang-up. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** How long a stop may take (closing connections, writing reports or state) before the process gives up on it. */
export const STOP_GRACE_MS = 10_000;

/** The exit code of a process a signal ended, as shells report it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/**
 * The stop signals a command receives, taken from the moment it is made (before the ready line, so a signal
 * sent as soon as that line appears stops the command cleanly). None is ever fatal: npm, tsx and CI runners
 * relay a signal to the whole process group, so duplicates are normal, and one must not cut a report or a
 * state file half-written.
 */
export class StopSignals {
  #first: NodeJS.Signals | undefined;
  readonly #listeners = new Set<(signal: NodeJS.Signals) => void>();
  readonly first: Promise<NodeJS.Signals>;

  constructor(readonly commandName: string) {
    let resolveFirst: (signal: NodeJS.Signals) => void = () => {};
    this.first = new Promise((resolve) => {
      resolveFirst = resolve;
    });
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.#first === undefined) {
        this.#first = signal;
        resolveFirst(signal);
      }
      for (const listener of this.#listeners) listener(signal);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  }

  /** The first stop signal received so far, if any. */
  get received(): NodeJS.Signals | undefined {
    return this.#first;
  }

  /** Calls listener with every stop signal from now on, the first included; returns the way to stop. */
  onEach(listener: (signal: NodeJS.Signals) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Bounds the stop that starts now: if the process is still here after STOP_GRACE_MS, it says so and exits. */
  bound(exitCode: number): void {
    setTimeout(() => {
      process.stderr.write(
        `${this.commandName}: the stop did not finish within ${STOP_GRACE_MS / 1000} s; exiting\n`,
      );
      process.exit(exitCode);
    }, STOP_GRACE_MS).unref();
  }
}
