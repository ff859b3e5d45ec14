import { formatBytes } from "../../common/byte-size.ts";
import type { HeldBytes } from "../judging/memory-budget.ts";
import type { SettingNames } from "../judging/setting-names.ts";

/**
 * An answer held until it is judged (--errors), so that one that breaks a rule can be replaced: its bytes
 * are kept as they came, as far as the body limit and the shared account allow; past that it goes on as it
 * comes (the bytes held so far first), judged all the same but no longer replaceable, saying why.
 */
export class HeldAnswer {
  #holding: boolean;
  readonly #raws: Buffer[] = [];
  #bytes = 0;
  /** Why the answer went on before it was judged. */
  unheld: string | undefined;

  constructor(
    holding: boolean,
    readonly held: HeldBytes,
    readonly maxBodyBytes: number,
    readonly names: SettingNames,
    /** Starts the answer to the client: its status line and headers, then each chunk. */
    readonly startAnswer: () => void,
    readonly write: (chunk: Buffer) => void,
  ) {
    this.#holding = holding;
  }

  get holding(): boolean {
    return this.#holding;
  }

  /** Keeps a chunk (`size`: the body's bytes so far with it) while held; false once the answer goes on. */
  take(chunk: Buffer, size: number): boolean {
    if (!this.#holding) return false;
    if (size <= this.maxBodyBytes && this.held.tryTake(chunk.length)) {
      this.#raws.push(chunk);
      this.#bytes += chunk.length;
      return true;
    }
    this.#holding = false;
    this.unheld =
      size > this.maxBodyBytes
        ? `the answer is larger than ${this.names.maxBody}`
        : `the proxy held ${formatBytes(this.held.limit)} of answers in flight together`;
    this.startAnswer();
    for (const raw of this.#raws) this.write(raw);
    this.giveBack();
    return false;
  }

  /** The answer's bytes as held, for passing it on whole once judged. */
  body(): Buffer {
    return Buffer.concat(this.#raws);
  }

  /** What it holds goes back to the account. */
  giveBack(): void {
    this.held.give(this.#bytes);
    this.#bytes = 0;
    this.#raws.length = 0;
  }
}
