/**
 * Requests sent without pause by a few workers until stopped, each status kept (0: no answer). Tests wait
 * for a number of answers, never for a stretch of time: on a loaded machine a window of 200 ms may hold two
 * requests or two hundred, so a count of what fits in one is no test of the code.
 */
export function steadyLoad(send: () => Promise<number>, workers = 1) {
  let running = true;
  const statuses: number[] = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const done = Promise.all(
    Array.from({ length: workers }, async () => {
      while (running) {
        statuses.push(await send().catch(() => 0));
        for (const waiter of waiting.filter((each) => statuses.length >= each.count)) {
          waiting.splice(waiting.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    }),
  );
  return {
    /** Resolves once this many more answers have come than have come so far. */
    answered: (more: number) =>
      new Promise<void>((resolve) => waiting.push({ count: statuses.length + more, resolve })),
    /** Stops sending; resolves to every status seen, in order. */
    stop: async () => {
      running = false;
      await done;
      return statuses;
    },
  };
}
