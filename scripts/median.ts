/** The middle value (the upper one of an even count), or NaN for none: how every benchmark table sums rounds. */
export const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
