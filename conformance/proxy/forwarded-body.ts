import type { IncomingMessage } from "node:http";
import { formatBytes } from "../../common/byte-size.ts";
import { JudgeTurns } from "../judging/judge-turns.ts";
import type { ListFeed, ListJudges } from "../judging/list-feed.ts";
import { judgeFault, type ListVerdict } from "../judging/list-judge.ts";
import { INDEXED_ORDER_BYTES, type MemoryBudget } from "../judging/memory-budget.ts";
import { PROXY_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import { PAST_WHOLE_ANSWER } from "../target/answer-body.ts";
import { type CodingFailure, DecoderChain, readCodings, unreadCoding } from "../target/content-coding.ts";
import { bodySecrets, formSecrets } from "../target/credentials.ts";
import { WHOLE_ANSWER_BYTES } from "../target/http-client.ts";
import {
  type Exchange,
  type ExchangeEnd,
  type ExchangeOutcome,
  type ExchangeTap,
  headerText,
  type UpstreamHead,
} from "./exchange-lifecycle.ts";
import { hiddenWhole } from "./traffic-secrets.ts";

/** Bytes of a body kept whole; a list past this is judged as it streams and only its start is kept. */
export const KEPT_BYTES = WHOLE_ANSWER_BYTES;

export interface BodyOutcome {
  /** The body decoded from any Content-Encoding: whole, or its first KEPT_BYTES when `whole` is false. */
  decoded: Buffer;
  whole: boolean;
  /** Decoded bytes in all (up to where reading stopped, for a body cut). */
  received: number;
  /** A list judged order by order as it streamed. */
  list?: ListVerdict;
  /** Why the body is not judged: past --max-body, or the proxy holding all it may of other answers. */
  notJudged?: string;
  /** Why the body cannot be judged as the answer it should be: it does not decode, or is too large for one. */
  cut?: string;
  /** Too large for an answer that is no list: `decoded` is its start, judged for what that proves. */
  startOnly?: true;
  /**
   * The body failed to decode on bytes that came, before its end: so whatever ended it, even an answer
   * broken off, was no body of its Content-Encoding (a decoder that fails only at the end may just have
   * been cut short).
   */
  undecodable?: true;
}

export interface ForwardedBodyOptions {
  maxBytes: number;
  contentEncoding: string | undefined;
  /** For a list: the judges to stream it to once the body outgrows what is kept. */
  judges: ListJudges | undefined;
  /** The account of what all exchanges in flight hold, shared. */
  held: MemoryBudget;
  /** How the caller names its settings in what the proxy says (default: runProxy's options). */
  names?: SettingNames;
  /** The answers arriving at the proxy, counted for the judges' turns; one of this body's own when absent. */
  turns?: JudgeTurns;
  /**
   * For an answer held until judged (--errors): whether it is still held, and how to pause reading from the
   * upstream (true) and go on (false). While it is held the judge paces the upstream instead of giving up.
   */
  pacing?: {
    active: () => boolean;
    pause: (paused: boolean) => void;
    /** The list is judged in part: its verdict on what was judged, once in. */
    judgedInPart?: (verdict: ListVerdict) => void;
  };
}

/**
 * What the proxy keeps of one answer's body while forwarding it: every chunk is decoded as a stream (its
 * output bounded: an answer not a list by KEPT_BYTES, a list by --max-body and the shared account, so a
 * compression bomb costs no more than the account) and kept up to KEPT_BYTES; a list past that is fed to a
 * streaming judge chunk by chunk (ListFeed: a worker thread, or short turns of this one), so no exchange
 * waits for another's judgement, the forwarding never waits for the judge, and what the judge has not
 * reached yet is all that is held. Small bodies are judged after they end. Whatever it holds it takes from
 * the shared account and gives back in `release`.
 */
export class ForwardedBody {
  readonly #chunks: Buffer[] = [];
  /** The list's judge, from the moment the body outgrew what is kept until it stops reading. */
  #feed: ListFeed | undefined;
  #streamed = false;
  /** The verdict on the start of a list judged in part. */
  #partialVerdict: Promise<ListVerdict> | undefined;
  /** Why only the start of the list is judged, once the judge fell too far behind. */
  #partial: string | undefined;
  readonly #turns: JudgeTurns;
  /** Ends this body's count among the answers arriving: at its last byte, when paced, or on release. */
  #stopArriving: () => void;
  /** Whether the last byte came (or the body was released before). */
  #over = false;
  #undecodable = false;
  /** The judge was told the list ended: its verdict on all of it is coming, and nothing can cut it short. */
  #ending = false;
  #kept = 0;
  /** What the judge's id index is charged to the shared account. */
  #indexCharged = 0;
  #received = 0;
  #keeping = true;
  #list: ListVerdict | undefined;
  #notJudged: string | undefined;
  #cut: string | undefined;
  #startOnly = false;
  readonly #decoder: DecoderChain | undefined;
  #ended: Promise<void> | undefined;
  readonly #options: ForwardedBodyOptions;
  readonly #names: SettingNames;

  constructor(options: ForwardedBodyOptions) {
    this.#options = options;
    this.#names = options.names ?? PROXY_OPTION_NAMES;
    this.#turns = options.turns ?? new JudgeTurns();
    this.#stopArriving = this.#turns.arriving();
    const read = readCodings(options.contentEncoding);
    // A coding it does not read leaves the body unread: judging its bytes as they are would blame the upstream
    // for what RFC 9110 lets it send a client that asked for that coding.
    if ("unread" in read) this.#notJudged = `${unreadCoding(read.unread)}: forwarded unchanged, not judged`;
    else if (read.codings.length > 0)
      this.#decoder = new DecoderChain(
        read.codings,
        {
          data: (chunk) => this.#take(chunk),
          failed: (failure) => this.#undecoded(failure),
          overBudget: (why) => {
            this.#notJudged ??= `${this.#overBudget()}: ${why}: forwarded unchanged, not judged`;
            this.#stopReading();
          },
        },
        options.held,
      );
  }

  /**
   * The body failed to decode: on bytes that came, before its end, or with bytes after the end of its coded
   * data, it is no body of its Content-Encoding.
   */
  #undecoded({ reason, trailing }: CodingFailure): void {
    if (this.#cut === undefined && (trailing || !this.#over)) this.#undecodable = true;
    this.#cut ??= `the body does not decode as its Content-Encoding says: ${reason}`;
    this.#stopReading();
  }

  add(raw: Buffer): void {
    if (this.#done) return;
    if (this.#decoder) this.#decoder.write(raw);
    else this.#take(raw);
  }

  /** The body once its last byte came and was decoded. */
  async end(): Promise<BodyOutcome> {
    this.#over = true;
    this.#stopArriving();
    const decoder = this.#decoder;
    if (decoder && !this.#done) {
      this.#ended ??= decoder.end();
      await this.#ended;
    }
    await this.#verdict();
    const outcome: BodyOutcome = {
      decoded: this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks),
      whole: !this.#streamed && this.#keeping && !this.#done,
      received: this.#received,
    };
    if (this.#notJudged !== undefined) outcome.notJudged = this.#notJudged;
    else if (this.#cut !== undefined) outcome.cut = this.#cut;
    if (this.#startOnly && outcome.cut !== undefined) outcome.startOnly = true;
    if (this.#undecodable) outcome.undecodable = true;
    else if (this.#list) outcome.list = this.#list;
    return outcome;
  }

  /** The streamed list's verdict: whole, or on its start when judged in part. */
  async #verdict(): Promise<void> {
    this.#ending = true;
    const pending = this.#feed && !this.#done ? this.#feed.end() : this.#partialVerdict;
    if (!pending) return;
    try {
      this.#list = await pending;
    } catch (error) {
      this.#failJudge(error);
    }
  }

  /** Gives back to the shared account what this body still holds, once its exchange is judged. */
  release(): void {
    this.#over = true;
    this.#stopArriving();
    const { held, pacing } = this.#options;
    held.give(this.#indexCharged);
    // A held answer's kept chunks are among the chunks the collector frees, charged until it ran (see
    // `MemoryBudget.letGo`); on the forwarding's way they are in its reserve.
    if (pacing) held.letGo(this.#kept);
    else held.give(this.#kept);
    this.#kept = 0;
    this.#indexCharged = 0;
    this.#feed?.drop();
    // Its state goes back to the account with it, whether the body decoded to its end or not.
    this.#decoder?.destroy();
  }

  /**
   * The judge's id index grows with the list and is charged to the shared account as it grows. Past what
   * the account has left (after the kept lists are let go of), the list is judged in part: what was judged
   * stands, the rest is forwarded unchanged. An index that alone would be more than the whole account
   * says so, with how far its ids went.
   */
  #chargeIndex(): void {
    const orders = this.#feed?.indexedOrders ?? 0;
    // What the index's arrays take (each grows to twice its length when full), never less than its share.
    const wanted = Math.max(orders * INDEXED_ORDER_BYTES, this.#feed?.indexBytes ?? 0);
    const { held } = this.#options;
    if (wanted <= this.#indexCharged) return;
    if (wanted > held.limit) {
      this.#notJudged = `the ids of this list outgrew the proxy's memory for the traffic (${formatBytes(held.limit)}, ${this.#names.maxMemory}) after ${orders} orders: forwarded unchanged, not judged`;
      this.#stopReading();
      return;
    }
    if (this.#ending) {
      // The judge is at work on the list's last bytes, their backlog given back as they are judged: the
      // index they add is held whatever the account says, until the verdict comes and the body is released.
      held.takeAnyway(wanted - this.#indexCharged);
      this.#indexCharged = wanted;
      return;
    }
    if (!held.tryTake(wanted - this.#indexCharged)) {
      this.#judgeInPart(
        `${this.#overBudget()}: the ids of this list needed more than the account had left after ${orders} orders`,
      );
      return;
    }
    this.#indexCharged = wanted;
  }

  /** Nothing more is read: the body is past a limit, or cannot be judged. */
  get #done(): boolean {
    return this.#notJudged !== undefined || this.#cut !== undefined || this.#partial !== undefined;
  }

  #take(chunk: Buffer): void {
    if (this.#done) return;
    this.#received += chunk.length;
    const { maxBytes, held } = this.#options;
    if (this.#received > maxBytes) {
      this.#notJudged = `the body is larger than the ${formatBytes(maxBytes)} ${this.#names.maxBody} allows: forwarded unchanged, not judged`;
      this.#stopReading();
      return;
    }
    if (this.#feed) {
      this.#toJudge(chunk);
      this.#keepStart(chunk);
      return;
    }
    const fits = this.#kept + chunk.length <= KEPT_BYTES;
    if (fits && held.tryTake(chunk.length)) {
      this.#chunks.push(chunk);
      this.#kept += chunk.length;
      return;
    }
    if (this.#options.judges) {
      // Too big to keep, or the proxy holds all it may: what was kept goes to the judge first, then every
      // chunk as it comes, and only the start that was kept stays.
      this.#startFeed(this.#options.judges);
      for (const kept of this.#chunks) this.#toJudge(kept);
      this.#toJudge(chunk);
      this.#keepStart(chunk);
      return;
    }
    if (!fits) {
      this.#cut = `${PAST_WHOLE_ANSWER} (stopped reading at ${this.#received} bytes)`;
      this.#startOnly = true;
      this.#keepStart(chunk);
    } else
      this.#notJudged = `the proxy held ${formatBytes(held.limit)} of answers in flight together: forwarded unchanged, not judged`;
    this.#stopReading();
  }

  #startFeed(judges: ListJudges): void {
    const { held, pacing } = this.#options;
    this.#streamed = true;
    this.#feed = judges.feed({
      held,
      holding: () => pacing?.active() ?? false,
      pause: (paused) => this.#pause(paused),
      progressed: () => {
        if (!this.#done) this.#chargeIndex();
      },
      failed: (error) => this.#failJudge(error),
    });
  }

  #toJudge(chunk: Buffer): void {
    if (!this.#feed || this.#done) return;
    if (!this.#feed.write(chunk))
      this.#judgeInPart(`${this.#overBudget()}: the judge fell behind the forwarding by more than it holds`);
  }

  #overBudget(): string {
    return `over the memory budget (${formatBytes(this.#options.held.limit)}, ${this.#names.maxMemory})`;
  }

  /** What was judged stands, with the reason the rest was not; the rest goes on unjudged. */
  #judgeInPart(reason: string): void {
    if (!this.#feed) return;
    const verdict = this.#feed.end(reason);
    this.#partialVerdict = verdict;
    this.#partial = reason;
    this.#stopReading();
    const judgedInPart = this.#options.pacing?.judgedInPart;
    // A failed verdict is the body's own to report, when it ends.
    if (judgedInPart) verdict.then(judgedInPart, () => {});
  }

  /** A judge that threw is a defect of the judge, met on this answer only: the answer is marked, not the proxy. */
  #failJudge(error: unknown): void {
    this.#cut ??= judgeFault(error);
    this.#stopReading();
  }

  #stopReading(): void {
    this.#feed?.drop();
    this.#feed = undefined;
    this.#decoder?.destroy();
  }

  /**
   * Reading pauses at the decoder too: a few compressed bytes can decode to any number. A paused body is not
   * arriving, so the judges need not leave the event loop to it.
   */
  #pause(paused: boolean): void {
    if (paused) {
      this.#decoder?.pause(true);
      this.#stopArriving();
    } else {
      this.#decoder?.pause(false);
      if (!this.#over) this.#stopArriving = this.#turns.arriving();
    }
    this.#options.pacing?.pause(paused);
  }

  #keepStart(chunk: Buffer): void {
    if (this.#kept >= KEPT_BYTES || !this.#keeping) return;
    const part = chunk.subarray(0, KEPT_BYTES - this.#kept);
    if (!this.#options.held.tryTake(part.length)) {
      this.#keeping = false;
      return;
    }
    this.#chunks.push(part);
    this.#kept += part.length;
  }
}

/** What a judged body's tap is given once, for every exchange of its forwarder. */
export type JudgedBodySettings = Required<
  Pick<ForwardedBodyOptions, "maxBytes" | "held" | "names" | "turns">
> & {
  /** Where a list answered 200 is streamed to once it is large. */
  judges: ListJudges;
};

/**
 * The judged body's tap on an exchange: the answer's body kept as it is forwarded (a large list fed to its
 * judge), handed on with the exchange's end. While an answer is held, the judge paces the upstream.
 */
export class JudgedBodyTap implements ExchangeTap {
  #body: ForwardedBody | undefined;
  #head: UpstreamHead | undefined;
  #size = 0;

  constructor(
    readonly settings: JudgedBodySettings,
    readonly exchange: { pause(why: "judge", pausing: boolean): void },
    readonly held?: { readonly awaitingVerdict: boolean; judgedInPart(verdict: ListVerdict): void },
  ) {}

  onUpstreamHead(head: UpstreamHead): void {
    const { held, exchange, settings } = this;
    this.#head = head;
    this.#body = new ForwardedBody({
      maxBytes: settings.maxBytes,
      held: settings.held,
      names: settings.names,
      turns: settings.turns,
      contentEncoding: headerText(head.incoming.headers["content-encoding"]),
      judges: head.isList ? settings.judges : undefined,
      ...(held
        ? {
            pacing: {
              active: () => held.awaitingVerdict,
              pause: (pausing: boolean) => exchange.pause("judge", pausing),
              judgedInPart: (verdict: ListVerdict) => held.judgedInPart(verdict),
            },
          }
        : {}),
    });
  }

  onData(chunk: Buffer, size: number): void {
    this.#size = size;
    this.settings.held.forwarded(chunk.length);
    this.#body?.add(chunk);
  }

  onEnd(end: ExchangeEnd): Promise<void> | undefined {
    const body = this.#body;
    const head = this.#head;
    if (body === undefined || head === undefined) return undefined;
    const { status, statusText, incoming } = head;
    return body.end().then((outcome) => {
      end.answer = { status, statusText, incoming, body: outcome, size: this.#size };
    });
  }

  onRelease(): void {
    this.#body?.release();
  }
}

/** Bytes of a form or JSON body read at most for its credentials: past them, the exchange's texts are hidden whole. */
export const FORM_READ_BYTES = 64 * 1024;
/** Bytes of a request body the HAR keeps at most. */
const HAR_REQUEST_BYTES = 1024 * 1024;

const FORM_TYPE = /^\s*application\/x-www-form-urlencoded\b/i;
/**
 * Bodies read for credentials besides a form's, by Content-Type: text, JSON (NDJSON too), XML, GraphQL and
 * multipart forms, each read by what it is (bodySecrets); a body with no Content-Type too. Others (bytes,
 * images, archives) pass on unread.
 */
const READ_TYPE =
  /^\s*(text\/|multipart\/form-data\b|application\/([\w.+-]*[+-])?(json|ndjson|jsonl|json-seq|xml|graphql)\b)/i;

/**
 * Whether a request carries an `application/x-www-form-urlencoded` body (as RFC 6750 §2.2 sends a bearer
 * token): a body, and a Content-Type of a form among its headers (any of them: which one a server takes is
 * its own). A request with no body is answered no before any header is read.
 */
export function carriesForm(request: IncomingMessage): boolean {
  return carriesBodyOf(request, FORM_TYPE);
}

/**
 * Whether a request carries a body read for its credentials (see READ_TYPE), read as carriesForm reads a
 * form; a body with no Content-Type at all is read too (a client may send JSON so).
 */
export function carriesReadBody(request: IncomingMessage): boolean {
  if (carriesBodyOf(request, READ_TYPE)) return true;
  return request.headers["content-type"] === undefined && carriesBodyOf(request, /^/, true);
}

function carriesBodyOf(request: IncomingMessage, type: RegExp, untyped = false): boolean {
  const { "content-length": length, "transfer-encoding": chunked } = request.headers;
  if ((length === undefined || length === "0") && chunked === undefined) return false;
  if (untyped) return true;
  const raw = request.rawHeaders;
  for (let at = 0; at + 1 < raw.length; at += 2)
    if ((raw[at] as string).toLowerCase() === "content-type" && type.test(raw[at + 1] as string)) return true;
  return false;
}

export interface RequestBodySettings {
  /** The request carries a form body: its credentials are among the exchange's own secrets. */
  form: boolean;
  /**
   * The request carries a body read for credentials (and no form; see carriesReadBody): its credential
   * values are among the exchange's own secrets, as a form's are.
   */
  text?: boolean;
  /** The HAR keeps the body (its first mebibyte). */
  forHar: boolean;
  held: MemoryBudget;
  /** Names (lower case) whose values are credentials beyond the usual ones. */
  secretNames: ReadonlySet<string>;
  names: SettingNames;
}

/**
 * The request body's one reading as it goes on to the upstream, for the HAR and for a form's credentials:
 * a form's bytes (up to FORM_READ_BYTES, each reserved from the account before it is kept, given back at
 * the exchange's end) are read when the exchange is over, so that the credentials it carried are among its
 * own secrets before any line, report or verdict of it is written. A form that cannot be read whole (past
 * the bound, the account full, not ended when the exchange was, encoded) has the exchange's texts hidden
 * whole instead. Any other body is not kept unless the HAR keeps it.
 */
export class RequestBodyTap implements ExchangeTap {
  #chunks: Buffer[] = [];
  #size = 0;
  /** What the form's bytes hold of the account. */
  #charged = 0;
  #ended = false;
  /** Why the form's credentials cannot all be read, once they cannot. */
  #unread: string | undefined;
  #released = false;

  constructor(readonly settings: RequestBodySettings) {}

  /** Which body's credentials are read, if any. */
  get #read(): "form" | "request" | undefined {
    return this.settings.form ? "form" : this.settings.text ? "request" : undefined;
  }

  /** The body as kept for the HAR: its first mebibyte. */
  get chunks(): readonly Buffer[] {
    return this.#chunks;
  }

  /** The body's bytes so far, kept or not. */
  get size(): number {
    return this.#size;
  }

  onRequest(exchange: Exchange): void {
    const { request } = exchange;
    const encoding = headerText(request.headers["content-encoding"])?.trim().toLowerCase();
    if (this.#read !== undefined && encoding !== undefined && encoding !== "" && encoding !== "identity")
      this.#unread = `its ${this.#read} body has a Content-Encoding (${encoding}) the proxy does not read`;
    request.on(
      "data",
      exchange.guard((chunk: Buffer) => this.#take(chunk)),
    );
    request.on("end", () => {
      this.#ended = true;
    });
  }

  #take(chunk: Buffer): void {
    // The body may go on after its exchange is over (an answer that came first): nothing more is kept.
    if (this.#released) return;
    this.#size += chunk.length;
    const { forHar, held, names } = this.settings;
    const read = this.#read;
    if (read !== undefined && this.#unread === undefined) {
      if (this.#size > FORM_READ_BYTES)
        this.#stopReading(
          `its ${read} body is larger than the ${formatBytes(FORM_READ_BYTES)} the proxy reads`,
        );
      else if (!held.tryTake(chunk.length))
        this.#stopReading(
          `its ${read} body came when the proxy held all ${names.maxMemory} allows (${formatBytes(held.limit)})`,
        );
      else this.#charged += chunk.length;
    }
    const keptUpTo = forHar ? HAR_REQUEST_BYTES : this.#unread === undefined ? FORM_READ_BYTES : 0;
    if (this.#size <= keptUpTo) this.#chunks.push(chunk);
  }

  /** The form is past what is read of it: what it holds goes back, and the HAR keeps what it keeps. */
  #stopReading(reason: string): void {
    this.#unread = reason;
    this.settings.held.give(this.#charged);
    this.#charged = 0;
    if (!this.settings.forHar) this.#chunks = [];
  }

  /** The body's credentials join the exchange's own secrets, before anything of the exchange is written. */
  onFinish(end: ExchangeEnd, outcome: ExchangeOutcome): void {
    const read = this.#read;
    if (read === undefined || end.fault !== undefined) return;
    const { secrets } = outcome.forwarded;
    if (this.#unread === undefined && !this.#ended)
      this.#unread = `its answer came before its ${read} body ended, so the proxy could not read all of it`;
    if (this.#unread !== undefined) {
      secrets.push(hiddenWhole(`the request's credentials could not all be read: ${this.#unread}`));
      return;
    }
    const text = Buffer.concat(this.#chunks).toString("utf8");
    const found = read === "form" ? formSecrets : bodySecrets;
    for (const secret of found(text, this.settings.secretNames)) secrets.push(secret);
  }

  onRelease(): void {
    this.#released = true;
    this.settings.held.give(this.#charged);
    this.#charged = 0;
    this.#chunks = [];
  }
}
