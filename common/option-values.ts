import { UsageError } from "./command-line.ts";

// The values flags take, one parser each, shared by both commands so that a duration, a size or a port
// reads the same wherever it is asked for.

const BYTE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/** A size as plain bytes or with a unit: 500000, 90MB, 2GiB (kB, MB, GB are powers of 1000; KiB… of 1024). */
export function parseByteSize(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = BYTE_UNITS[(match?.[2] ?? "").toLowerCase()];
  const bytes = match && unit !== undefined ? Math.floor(Number(match[1]) * unit) : Number.NaN;
  if (bytes === 0) throw new UsageError(`${flag} must be at least 1 byte (got "${text}")`);
  if (!Number.isSafeInteger(bytes) || bytes < 1)
    throw new UsageError(`${flag} must be a size like 500000, 90MB or 2GiB (got "${text}")`);
  return bytes;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds that a Node timer can wait: past 2^31 - 1 it fires at once instead, after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration as a whole number with its unit: 500ms, 30s, 2m, 1h. A bare number is refused in every flag,
 * naming the two readings it could have, since flags that once read it as milliseconds and as seconds
 * made `10` mean either. At most `maxMs` (by default what a timer can wait, about 24.8 days), at least 1 ms.
 */
export function parseDuration(
  flag: string,
  text: string,
  { maxMs = MAX_TIMER_MS }: { maxMs?: number } = {},
): number {
  if (/^\d+$/.test(text)) {
    throw new UsageError(`${flag} ${text} needs a unit: ${text}ms or ${text}s?`);
  }
  const match = /^(\d+)(ms|s|m|h)$/.exec(text);
  const unit = match?.[2];
  const ms = match && unit !== undefined ? Number(match[1]) * (DURATION_UNITS[unit] as number) : Number.NaN;
  if (!(ms >= 1 && ms <= maxMs)) {
    throw new UsageError(
      `${flag} must be a duration like 500ms, 90s, 30m or 2h, from 1ms to ${describeMs(maxMs)} (got "${text}")`,
    );
  }
  return ms;
}

function describeMs(ms: number): string {
  if (ms === MAX_TIMER_MS) return `${MAX_TIMER_MS}ms (about 24.8 days, what a timer can wait)`;
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} days`;
  return `${ms}ms`;
}

/** A TCP port, 0 meaning any free one. */
export function parsePort(flag: string, text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new UsageError(`${flag} must be a whole number from 0 to 65535 (got "${text}")`);
  return port;
}

/** A whole number from `minimum` to `maximum`. */
export function parseWholeNumber(
  flag: string,
  text: string,
  { minimum = 1, maximum = Number.MAX_SAFE_INTEGER }: { minimum?: number; maximum?: number } = {},
): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < minimum || value > maximum) {
    const range =
      maximum === Number.MAX_SAFE_INTEGER
        ? minimum === 1
          ? "a positive whole number"
          : `a whole number of at least ${minimum}`
        : `a whole number from ${minimum} to ${maximum}`;
    throw new UsageError(`${flag} must be ${range} (got "${text}")`);
  }
  return value;
}
