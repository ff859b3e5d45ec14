/** The signals that ask a command to stop: a terminal's Ctrl-C, a CI runner's or a supervisor's stop, a hang-up. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** How long a stop may take (closing connections, writing reports or state) before the process gives up on it. */
export const STOP_GRACE_MS = 10_000;

/**
 * Resolves with the first stop signal. Later ones are taken and ignored, never fatal: npm, tsx and CI runners
 * relay a signal to the whole process group, so duplicates are normal, and one must not cut a report or a
 * state file half-written. If the stop has not finished STOP_GRACE_MS after the first signal, the process
 * says so and exits 1.
 */
export function firstStopSignal(name: string): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let first: NodeJS.Signals | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (first !== undefined) return;
      first = signal;
      setTimeout(() => {
        process.stderr.write(`${name}: the stop did not finish within ${STOP_GRACE_MS / 1000} s; exiting\n`);
        process.exit(1);
      }, STOP_GRACE_MS).unref();
      resolve(signal);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  });
}
