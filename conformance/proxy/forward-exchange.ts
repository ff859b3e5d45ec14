import type { IncomingMessage, ServerResponse } from "node:http";
import { JudgeTurns } from "../judging/judge-turns.ts";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { PROXY_OPTION_NAMES } from "../judging/setting-names.ts";
import { hostnameOf } from "../target/http-client.ts";
import { CancelsInFlight, CancelTap } from "./cancels-in-flight.ts";
import { DeadlineSweep } from "./deadline-sweep.ts";
import {
  Exchange,
  type ExchangeContext,
  type ExchangeOutcome,
  type ExchangeTap,
  type ForwarderSettings,
} from "./exchange-lifecycle.ts";
import { requestHeaderFilter } from "./forward-headers.ts";
import { carriesForm, carriesReadBody, JudgedBodyTap, RequestBodyTap } from "./forwarded-body.ts";
import { HarTap } from "./har-tap.ts";
import { HeldAnswerTap, HeldRoom } from "./held-answer.ts";
import { SpillFolder } from "./held-spill.ts";
import type { CheckedRequest } from "./request-edge.ts";

export type { ExchangeOutcome, ForwarderSettings, ForwardProxy } from "./exchange-lifecycle.ts";
export { LazyResponse } from "./exchange-lifecycle.ts";
export { sendError } from "./own-answer.ts";

/**
 * The request handler: each request becomes an `Exchange` with its taps (cancels in flight, the HAR, the
 * body kept to judge, the held answer under --errors, then any the settings add), each exchange's outcome
 * handed to `done` once. Judging happens there, off the bytes' way.
 */
export class Forwarder {
  readonly cancels: CancelsInFlight;
  readonly #settings: ForwarderSettings;
  readonly #context: ExchangeContext;
  readonly #deadlines: DeadlineSweep;
  /** Every exchange not yet handed on. */
  readonly #inFlight = new Set<Exchange>();
  /** The held answers (--errors) and the room in the account they wait for. */
  readonly #room: HeldRoom;
  /** Where held answers put what is past their share of memory. */
  readonly #spills: SpillFolder;
  #seq = 0;

  constructor(settings: ForwarderSettings, done: (outcome: ExchangeOutcome) => void) {
    this.#settings = settings;
    this.cancels = settings.cancels ?? new CancelsInFlight();
    const names = settings.names ?? PROXY_OPTION_NAMES;
    const deadlineMessage = () => `not complete within the ${settings.deadlineMs} ms ${names.deadline}`;
    this.#deadlines = new DeadlineSweep(settings.timeoutMs, () => new Error(deadlineMessage()));
    const held = settings.held ?? new MemoryBudget();
    const turns = settings.turns ?? new JudgeTurns();
    this.#room = new HeldRoom(held, names);
    this.#spills = new SpillFolder(held, settings.onProblem);
    this.#context = {
      settings,
      upstreamBase: settings.upstream.pathname.replace(/\/+$/, ""),
      hostname: hostnameOf(settings.upstream),
      requestHeaders: requestHeaderFilter(settings.upstream.host, settings.added),
      names,
      held,
      deadlines: this.#deadlines,
      deadlineMessage,
      taps: (exchange) => this.#tapsOf(exchange, held, turns),
      over: (exchange) => {
        this.#inFlight.delete(exchange);
        this.#deadlines.ended(exchange);
      },
      done,
    };
  }

  /** Forwards one request: its exchange's number in the traffic. */
  forward(request: IncomingMessage, response: ServerResponse, checked: CheckedRequest): number {
    const exchange = new Exchange(this.#context, ++this.#seq, request, response, checked);
    this.#inFlight.add(exchange);
    // The whole exchange ends by its deadline, in any state.
    this.#deadlines.exchange(exchange, exchange.begun + this.#settings.deadlineMs, () => exchange.expire());
    exchange.onRequest();
    return exchange.number;
  }

  stop(): void {
    this.#deadlines.stop();
    this.#room.stop();
    this.#spills.stop();
  }

  /** Ends every exchange still in flight, each handed on as cut off for this reason once what came is judged. */
  cutInFlight(reason: string): void {
    for (const exchange of [...this.#inFlight]) exchange.cut(reason);
  }

  /** Hands on every cut exchange still judging what came of it, without that verdict: never left out. */
  endCut(reason: string): void {
    for (const exchange of [...this.#inFlight]) exchange.endCut(reason);
  }

  /** The forwarder's own taps, in the order they are called, then the settings' own. */
  #tapsOf(exchange: Exchange, held: MemoryBudget, turns: JudgeTurns): ExchangeTap[] {
    const settings = this.#settings;
    const names = this.#context.names;
    const answer = settings.holdAnswers
      ? new HeldAnswerTap(exchange, held, settings.maxBodyBytes, names, this.#room, this.#spills)
      : undefined;
    const taps: ExchangeTap[] = [new CancelTap(this.cancels)];
    // The request's body is read only for its credentials (a form, a text body) or the HAR: other requests
    // pass on unread.
    const form = carriesForm(exchange.request);
    const text = !form && carriesReadBody(exchange.request);
    if (form || text || settings.keepForHar) {
      const requestBody = new RequestBodyTap({
        form,
        text,
        forHar: settings.keepForHar,
        held,
        secretNames: settings.secretNames,
        names,
      });
      taps.push(requestBody);
      if (settings.keepForHar) taps.push(new HarTap(requestBody));
    }
    const body = new JudgedBodyTap(
      { maxBytes: settings.maxBodyBytes, judges: settings.judges, held, names, turns },
      exchange,
      answer,
    );
    taps.push(body);
    if (answer) taps.push(answer);
    if (settings.taps) taps.push(...settings.taps(exchange));
    return taps;
  }
}
