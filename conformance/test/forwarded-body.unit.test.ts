import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { IncomingMessage } from "node:http";
import { after, describe, it } from "node:test";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { PROXY_OPTION_NAMES } from "../judging/setting-names.ts";
import { WorkerJudges } from "../judging/worker-judges.ts";
import type { Exchange, ExchangeEnd, ExchangeOutcome } from "../proxy/exchange-lifecycle.ts";
import {
  carriesForm,
  FORM_READ_BYTES,
  ForwardedBody,
  KEPT_BYTES,
  RequestBodyTap,
} from "../proxy/forwarded-body.ts";
import { RECORDS_KEPT_UP_TO } from "../proxy/state-rules.ts";
import { TrafficSecrets } from "../proxy/traffic-secrets.ts";

// What the proxy keeps of a forwarded list: a list whose judging ends after its last byte came always
// gets its verdict, whatever the account does meanwhile. A test that never gets one fails by its timeout.

const ORDERS = 40_000;
const list = Buffer.from(
  `[${Array.from(
    { length: ORDERS },
    (_, at) => `{"id":${at + 1},"petId":1,"quantity":1,"shipDate":"2026-01-01T00:00:00Z","complete":false}`,
  ).join(",")}]`,
);

describe("a forwarded list judged on the judges' thread", () => {
  const judges = new WorkerJudges({ keepRecordsUpTo: RECORDS_KEPT_UP_TO });
  after(() => judges.close());

  it("gets its verdict when the account fills up while the rest is judged after the last byte", {
    timeout: 20_000,
  }, async () => {
    assert.ok(list.length > 2 * KEPT_BYTES);
    const held = new MemoryBudget(64 * 1024 * 1024);
    const body = new ForwardedBody({ maxBytes: 100 * 1024 * 1024, contentEncoding: undefined, judges, held });
    for (let at = 0; at < list.length; at += 64 * 1024) body.add(list.subarray(at, at + 64 * 1024));
    // Other answers take all the room left, and what the judge gives back as it goes: the list's ids,
    // indexed only now, find none.
    const others = held.limit - held.held + list.length;
    held.take(others);
    const outcome = await body.end();
    assert.equal(outcome.list?.count, ORDERS, "the whole list was judged: its last byte had come");
    assert.equal(outcome.list?.invalid.count, 0);
    held.give(others);
    body.release();
    assert.equal(held.held, 0, "all the body held, its index included, went back");
  });
});

describe("a request's form body, read for its credentials as it goes on", () => {
  /** A request as the proxy's server hands it over, its body to come as events. */
  function requestWith(rawHeaders: string[]): IncomingMessage {
    const headers: Record<string, string> = {};
    for (let at = 0; at + 1 < rawHeaders.length; at += 2)
      headers[(rawHeaders[at] as string).toLowerCase()] ??= rawHeaders[at + 1] as string;
    return Object.assign(new EventEmitter(), { headers, rawHeaders }) as unknown as IncomingMessage;
  }

  const FORM = ["Content-Type", "application/x-www-form-urlencoded", "Content-Length", "100"];

  /** The tap on one request, the account it holds from, and its exchange's texts as the proxy hides them. */
  function tapOn(request: IncomingMessage, held = new MemoryBudget(1024 * 1024)) {
    const tap = new RequestBodyTap({
      form: carriesForm(request),
      forHar: false,
      held,
      secretNames: new Set(),
      names: PROXY_OPTION_NAMES,
    });
    tap.onRequest({ request, guard: (part: () => void) => part } as unknown as Exchange);
    const finish = (end: ExchangeEnd = {}) => {
      const outcome = { forwarded: { secrets: ["own-header-token"] } } as unknown as ExchangeOutcome;
      tap.onFinish(end, outcome);
      return new TrafficSecrets({}, {}).forExchange(outcome.forwarded.secrets);
    };
    return { tap, held, finish };
  }

  it("finds a form's credentials, reserved from the account while kept and given back at the end", () => {
    const request = requestWith(FORM);
    const { tap, held, finish } = tapOn(request);
    const body = "grant_type=client_credentials&access_token=form%2Ftoken%2B1&client_secret=s3cr3t-v4lue";
    request.emit("data", Buffer.from(body.slice(0, 40)));
    request.emit("data", Buffer.from(body.slice(40)));
    request.emit("end");
    assert.equal(held.held, body.length, "the form's bytes are held in the account");
    const hide = finish();
    assert.equal(
      hide("echo form/token+1 s3cr3t-v4lue own-header-token client_credentials"),
      "echo *** *** *** client_credentials",
    );
    tap.onRelease();
    assert.equal(held.held, 0);
  });

  it("hides an exchange's texts whole when its form cannot be read whole, and says why", () => {
    // Each case: how the body comes, what the account holds for others meanwhile, why it is not read.
    const cases: Array<[string, (request: IncomingMessage, held: MemoryBudget) => number, RegExp]> = [
      [
        "past the bound",
        (request) => {
          request.emit("data", Buffer.alloc(FORM_READ_BYTES, "a"));
          request.emit("data", Buffer.from("&access_token=late-token-1"));
          request.emit("end");
          return 0;
        },
        /its form body is larger than the 64 KiB the proxy reads/,
      ],
      [
        "the account full",
        (request, held) => {
          held.take(held.limit);
          request.emit("data", Buffer.from("access_token=late-token-1"));
          request.emit("end");
          return held.limit;
        },
        /held all maxHeldBytes allows/,
      ],
      [
        "not ended when the exchange was",
        (request) => {
          request.emit("data", Buffer.from("access_token=late-tok"));
          return 0;
        },
        /its answer came before its form body ended/,
      ],
    ];
    for (const [what, play, why] of cases) {
      const request = requestWith(FORM);
      const { tap, held, finish } = tapOn(request);
      const others = play(request, held);
      const hidden = finish()("DELETE /v1/store/orders/5 echo late-token-1");
      assert.match(hidden, /^\*\*\* \(hidden whole: the request's credentials could not all be read: /, what);
      assert.match(hidden, why, what);
      tap.onRelease();
      // The body comes on after its exchange is over: nothing more is held.
      request.emit("data", Buffer.from("&more=1"));
      assert.equal(held.held, others, `${what}: all the form held went back`);
    }
  });

  it("reads only form bodies: a request with no body, or another type, is not read", () => {
    assert.equal(carriesForm(requestWith(["Content-Type", "application/x-www-form-urlencoded"])), false);
    assert.equal(
      carriesForm(requestWith(["Content-Type", "application/json", "Content-Length", "9"])),
      false,
    );
    assert.equal(carriesForm(requestWith([...FORM.slice(0, 2), "Transfer-Encoding", "chunked"])), true);
    // Two Content-Types: which one a server takes is its own, so a form among them is read.
    assert.equal(carriesForm(requestWith(["Content-Type", "text/plain", ...FORM])), true);
  });
});
