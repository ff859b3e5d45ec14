import { createHash } from "node:crypto";
import type { ListJudge, ListVerdict } from "./list-judge.ts";
import type { MemoryBudget } from "./memory-budget.ts";

/** What reads a list's body as it arrives: a judge, or a reading that may find the body judged already. */
export interface ListReading {
  write(chunk: Uint8Array): void;
  end(): ListVerdict;
  /** The body will not be read to its end (cut, past a limit, unjudgeable): what it holds is let go. */
  abandon(): void;
}

const BLOCK_BYTES = 64 * 1024;
/**
 * Distinct judged bodies remembered, the latest first: a list before a change and after it. Each costs 32
 * bytes per 64 KiB of its body (about 45 KiB at a million orders) and keeps its verdict's index alive.
 */
const REMEMBERED = 2;

interface Judged {
  bytes: number;
  blocks: readonly Buffer[];
  verdict: ListVerdict;
}

/**
 * Readings of the list a run makes, judged once per distinct body: a run reads the list up to nine times
 * and most readings are byte for byte the one before. A body is held while each of its 64 KiB blocks has
 * the SHA-256 of the same block of a body already judged; when it ends the same, it takes that body's
 * verdict (the judge gives one verdict to one sequence of bytes), and at the first block that differs, or
 * when the account has no room to hold more, what was held goes to a judge of its own and the rest streams
 * in as it comes. What is held draws from the run's memory account.
 */
export class IdenticalReadings {
  readonly #judged: Judged[] = [];

  constructor(
    /** The run's account for bodies held; its limit also bounds what one reading's reader may make. */
    readonly account: MemoryBudget,
    private readonly blockBytes = BLOCK_BYTES,
  ) {}

  reading(newJudge: () => ListJudge): ListReading {
    return new ListReadingInProgress(
      this.account,
      this.blockBytes,
      this.#judged.slice(),
      newJudge,
      (judged) => {
        this.#judged.unshift(judged);
        this.#judged.length = Math.min(this.#judged.length, REMEMBERED);
      },
    );
  }
}

class ListReadingInProgress implements ListReading {
  #bytes = 0;
  readonly #blocks: Buffer[] = [];
  #block = createHash("sha256");
  #blockFill = 0;
  #held: Uint8Array[] = [];
  #heldBytes = 0;
  #judge: ListJudge | undefined;

  constructor(
    private readonly account: MemoryBudget,
    private readonly blockBytes: number,
    /** Judged bodies this one is still the same as, block for block. */
    private candidates: Judged[],
    private readonly newJudge: () => ListJudge,
    private readonly remember: (judged: Judged) => void,
  ) {}

  write(chunk: Uint8Array): void {
    this.#bytes += chunk.length;
    this.#digest(chunk);
    if (this.#judge) {
      this.#judge.write(chunk);
      return;
    }
    if (this.candidates.length > 0 && this.account.tryTake(chunk.length)) {
      this.#held.push(chunk);
      this.#heldBytes += chunk.length;
    } else this.#judgeHeld().write(chunk);
  }

  end(): ListVerdict {
    if (this.#blockFill > 0) this.#endBlock();
    if (!this.#judge) {
      const same = this.candidates.find(
        (judged) => judged.bytes === this.#bytes && judged.blocks.length === this.#blocks.length,
      );
      if (same) {
        this.#release();
        return same.verdict;
      }
    }
    const verdict = this.#judgeHeld().end();
    this.remember({ bytes: this.#bytes, blocks: this.#blocks, verdict });
    return verdict;
  }

  abandon(): void {
    this.#release();
  }

  /** The judge of this body, given what was held of it first. */
  #judgeHeld(): ListJudge {
    if (this.#judge) return this.#judge;
    const judge = this.newJudge();
    this.#judge = judge;
    const held = this.#held;
    this.#release();
    for (const chunk of held) judge.write(chunk);
    return judge;
  }

  #release(): void {
    this.account.give(this.#heldBytes);
    this.#heldBytes = 0;
    this.#held = [];
  }

  #digest(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      const take = Math.min(this.blockBytes - this.#blockFill, chunk.length - at);
      this.#block.update(chunk.subarray(at, at + take));
      this.#blockFill += take;
      at += take;
      if (this.#blockFill === this.blockBytes) this.#endBlock();
    }
  }

  #endBlock(): void {
    const digest = this.#block.digest();
    const index = this.#blocks.length;
    this.#blocks.push(digest);
    this.#block = createHash("sha256");
    this.#blockFill = 0;
    if (this.candidates.length === 0) return;
    this.candidates = this.candidates.filter((judged) => judged.blocks[index]?.equals(digest) === true);
    if (this.candidates.length === 0 && !this.#judge) this.#judgeHeld();
  }
}
