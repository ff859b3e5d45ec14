import { isUtf8 } from "node:buffer";
import { firstNonUtf8, notUtf8, sequenceLength } from "./utf8.ts";

/**
 * Bytes checked as UTF-8 (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF) as they arrive in
 * chunks cut anywhere, a character split between two chunks included. Node's own check runs over each
 * chunk; only a chunk that fails it is walked byte by byte, to name the byte.
 */
export class Utf8Stream {
  /** The start of a character the last chunk ended in. */
  #carried: number[] = [];
  /** Bytes before the current chunk. */
  #base = 0;

  /** The offset of the first byte that begins no character, or -1 while all is well. */
  write(chunk: Uint8Array): number {
    let start = 0;
    if (this.#carried.length > 0) {
      const lead = this.#carried[0] as number;
      const wanted = sequenceLength(lead) - this.#carried.length;
      const taken = Math.min(wanted, chunk.length);
      const joined = Uint8Array.from([...this.#carried, ...chunk.subarray(0, taken)]);
      const at = firstNonUtf8(joined, taken < wanted);
      if (at !== -1) return this.#base - this.#carried.length + at;
      start = taken;
      if (taken < wanted) {
        this.#carried = [...joined];
        this.#base += chunk.length;
        return -1;
      }
      this.#carried = [];
    }
    const end = chunk.length - cutTail(chunk, start);
    const whole = chunk.subarray(start, end);
    if (!isUtf8(whole)) return this.#base + start + firstNonUtf8(whole, false);
    this.#carried = [...chunk.subarray(end)];
    this.#base += chunk.length;
    return -1;
  }

  /** At the end of the bytes: the offset of a character left unfinished, or -1. */
  end(): number {
    return this.#carried.length > 0 ? this.#base - this.#carried.length : -1;
  }
}

/** How many bytes at the end of `chunk` (from `start` on) are the start of a character cut by its end. */
function cutTail(chunk: Uint8Array, start: number): number {
  for (let back = 1; back <= 3 && chunk.length - back >= start; back++) {
    const byte = chunk[chunk.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const length = sequenceLength(byte);
    return length > back ? back : 0;
  }
  return 0;
}

/** Why bytes held whole are not UTF-8, naming the byte; undefined when they are. */
export function utf8Problem(bytes: Uint8Array): string | undefined {
  if (isUtf8(bytes)) return undefined;
  const at = firstNonUtf8(bytes, false);
  return notUtf8(at, bytes[at]);
}
