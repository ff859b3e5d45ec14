/** A judge's turn: a few milliseconds of work, then whether it has more waiting. */
export type JudgeTurn = () => boolean;

// While any answer's bytes are still coming, all judges together take a turn of about 4 ms, then leave this
// long to the forwarding: a fifth of the event loop, whatever number of lists are being judged. A third
// made a list of a million orders reach its client about 2x later than through a bare proxy, a fifth about
// 1.5x (the forwarding alone: 1.1x); what the judge has not reached meanwhile is held in the account.
const TURN_GAP_MS = 16;

/**
 * The turns of every list judge of one proxy, taken one at a time, the oldest judge's first. Each judge alone used to
 * take its third of the event loop while its list arrived and all of it after; with two lists back to
 * back, the first one's judge then ran flat out while the second was forwarded, and the client of the
 * second waited for it. Here the judges share one fifth while anything is still arriving, and only when
 * nothing is do they take the whole loop.
 */
export class JudgeTurns {
  #arriving = 0;
  readonly #waiting: JudgeTurn[] = [];
  #scheduled = false;

  /** Counts an answer as arriving until the function returned is called (more calls do nothing). */
  arriving(): () => void {
    this.#arriving++;
    let counted = true;
    return () => {
      if (!counted) return;
      counted = false;
      this.#arriving--;
    };
  }

  /** Queues a judge for turns until its turn says it has nothing more waiting. */
  want(turn: JudgeTurn): void {
    if (!this.#waiting.includes(turn)) this.#waiting.push(turn);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled || this.#waiting.length === 0) return;
    this.#scheduled = true;
    if (this.#arriving > 0) setTimeout(this.#next, TURN_GAP_MS);
    else setImmediate(this.#next);
  }

  readonly #next = () => {
    this.#scheduled = false;
    // Oldest first: a list judged to its end gives back what it held, where judging all lists a little at a
    // time would hold all of them longer.
    const turn = this.#waiting[0];
    if (turn && !turn()) this.#waiting.shift();
    this.#schedule();
  };
}
