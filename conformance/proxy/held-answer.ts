import type { IncomingMessage } from "node:http";
import { formatBytes } from "../../common/byte-size.ts";
import type { MemoryBudget } from "../judging/memory-budget.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { Exchange, ExchangeEnd, ExchangeTap, HeldReply, UpstreamHead } from "./exchange-lifecycle.ts";
import { sendError, upstreamCors } from "./own-answer.ts";

/** The client's side of a held answer. */
export interface HeldAnswerClient {
  /** Starts the answer to the client: its status line and headers. */
  start: () => void;
  /** Writes a chunk of the body; `flushed` is called once the connection took it (or failed to). */
  write: (chunk: Buffer, flushed: () => void) => void;
  end: () => void;
}

/**
 * An answer held until it is judged (--errors), so that one that breaks a rule can be replaced: its bytes
 * are kept as they came, as far as the body limit and the shared account allow; past that it goes on as it
 * comes (the bytes held so far first), judged all the same but no longer replaceable, saying why. Bytes
 * handed to the client stay in the account until its connection took them: a slow client holds them in
 * the proxy's memory all the same.
 */
export class HeldAnswer {
  #holding: boolean;
  readonly #raws: Buffer[] = [];
  #bytes = 0;
  /** Bytes written to the client and not yet taken by its connection. */
  #flushing = 0;
  #closed = false;
  /** Why the answer went on before it was judged. */
  unheld: string | undefined;

  constructor(
    holding: boolean,
    readonly held: MemoryBudget,
    readonly maxBodyBytes: number,
    readonly names: SettingNames,
    readonly client: HeldAnswerClient,
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
    this.client.start();
    this.#writeHeld();
    return false;
  }

  /** Passes the answer on whole as it came, once judged. */
  pass(): void {
    this.client.start();
    this.#writeHeld();
    this.client.end();
  }

  /** What it holds goes back to the account; what the client's connection has yet to take stays. */
  giveBack(): void {
    this.held.give(this.#bytes);
    this.#bytes = 0;
    this.#raws.length = 0;
  }

  /** The client's connection closed: what it had not taken goes back to the account. */
  closed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.held.give(this.#flushing);
    this.#flushing = 0;
  }

  /** The held bytes go to the client, their charge with them until its connection took each. */
  #writeHeld(): void {
    for (const raw of this.#raws) {
      if (this.#closed) this.held.give(raw.length);
      else {
        this.#flushing += raw.length;
        this.client.write(raw, () => this.#flushed(raw.length));
      }
    }
    this.#bytes = 0;
    this.#raws.length = 0;
  }

  #flushed(bytes: number): void {
    if (this.#closed) return;
    this.#flushing -= bytes;
    this.held.give(bytes);
  }
}

/** The held answer's tap on an exchange (--errors): the answer's bytes kept from the client until judged. */
export class HeldAnswerTap implements ExchangeTap {
  #answer: HeldAnswer | undefined;
  #head: UpstreamHead | undefined;

  constructor(
    readonly exchange: Exchange,
    readonly held: MemoryBudget,
    readonly maxBodyBytes: number,
    readonly names: SettingNames,
  ) {}

  get holding(): boolean {
    return this.#answer?.holding ?? false;
  }

  onUpstreamHead(head: UpstreamHead): void {
    const { status, statusText, headers } = head;
    const { response } = this.exchange;
    this.#head = head;
    const answer = new HeldAnswer(true, this.held, this.maxBodyBytes, this.names, {
      start: () => response.writeHead(status, statusText, headers),
      write: (chunk, flushed) => response.write(chunk, flushed),
      end: () => response.end(),
    });
    this.#answer = answer;
    response.once(
      "close",
      this.exchange.guard(() => answer.closed()),
    );
  }

  onData(chunk: Buffer, size: number): boolean {
    return this.#answer?.take(chunk, size) ?? false;
  }

  onEnd(end: ExchangeEnd): void {
    const answer = this.#answer;
    const head = this.#head;
    if (answer === undefined || head === undefined) return;
    if (answer.holding) end.reply = this.#reply(answer, head.incoming);
    if (answer.unheld !== undefined) end.unheld = answer.unheld;
  }

  onRelease(): void {
    this.#answer?.giveBack();
  }

  #reply(answer: HeldAnswer, incoming: IncomingMessage): HeldReply {
    const { response } = this.exchange;
    return {
      // Passed on chunk by chunk as they came: each stays in the account until the client's connection
      // took it, however slowly it reads.
      pass: () => answer.pass(),
      replace: (status, record) => sendError(response, status, record, upstreamCors(incoming)),
      fail: () => {
        if (!response.headersSent)
          sendError(response, 502, { code: "proxy_fault", message: "the proxy failed" });
        else response.destroy();
      },
    };
  }
}
