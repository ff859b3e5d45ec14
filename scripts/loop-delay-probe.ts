import { monitorEventLoopDelay } from "node:perf_hooks";

/**
 * Loaded with `node --import` into a process a benchmark measures: on SIGUSR2 it writes the worst
 * event-loop delay since the last SIGUSR2 (or since start) to stderr as `loop-delay-max-ms N`, then
 * starts over, so a benchmark can leave out start-up and measure one stretch.
 */
const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();
process.on("SIGUSR2", () => {
  process.stderr.write(`loop-delay-max-ms ${(histogram.max / 1e6).toFixed(1)}\n`);
  histogram.reset();
});
