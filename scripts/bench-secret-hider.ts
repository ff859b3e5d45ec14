import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { TrafficSecrets } from "../conformance/proxy/traffic-secrets.ts";
import { requestSecrets } from "../conformance/target/credentials.ts";
import { secretHider } from "../conformance/target/secret-hider.ts";
import { median } from "./median.ts";

/**
 * What hiding secrets costs: a 1 MiB list with 5 configured secrets against a plain copy of its bytes (the
 * copy the HAR makes of a body anyway), beside the two simpler ways (one pass per form, one regular
 * expression over the text), per exchange with one client token against a thousand distinct ones, and with
 * a hostile client's Cookie of more values than one expression holds.
 * Run alone: `npx tsx scripts/bench-secret-hider.ts`.
 */
export function secretHidingCost(rounds = 15): Array<[string, string]> {
  const text = orderList(1 << 20);
  const bytes = Buffer.from(text);
  const secrets = Array.from({ length: 5 }, () => randomBytes(24).toString("base64"));
  const hide = secretHider(secrets);
  let orders = 0;
  const echoing = text.replace(/"status":"placed"/g, (found) =>
    ++orders % 50 === 0 ? `"status":"${secrets[0]}"` : found,
  );
  const forms = secrets.flatMap((secret) => [
    secret,
    Buffer.from(secret).toString("base64"),
    encodeURIComponent(secret),
  ]);
  const perForm = (subject: string) =>
    forms.reduce((out, form) => (out.includes(form) ? out.split(form).join("***") : out), subject);
  const oneExpression = new RegExp(
    forms.map((form) => form.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&")).join("|"),
    "g",
  );
  const traffic = trafficOf(secrets);
  for (let client = 0; client < 1000; client++) traffic.forExchange([`client-token-${client}`]);
  const late = traffic.forExchange([randomBytes(24).toString("base64")]);
  // Its longest run of letters and digits is 6 characters: the scan's strides are that short.
  const dashed = traffic.forExchange(["client-token-1000"]);
  // A hostile client's 20 KB Cookie of 1,500 values: more forms than one expression holds.
  const cookie = Array.from({ length: 1500 }, (_, at) => `c${at}=v${String(at).padStart(5, "0")}`).join("; ");
  const crowded = traffic.forExchange(requestSecrets(["Cookie", cookie], "/"));
  const copy = msPer(rounds, () => bytes.toString("utf8"));
  const rows: Array<[string, number]> = [
    ["a plain copy of the bytes (Buffer#toString)", copy],
    ["the hider, 5 secrets, none in the text", msPer(rounds, () => hide(text))],
    ["the hider, 5 secrets, one echoed in every 50th order", msPer(rounds, () => hide(echoing))],
    [
      "an exchange's hider after 1,000 distinct client tokens, its own like the keys",
      msPer(rounds, () => late(text)),
    ],
    ["the same, its own `client-token-1000`", msPer(rounds, () => dashed(text))],
    ["the same, its own Cookie of 1,500 values (20 KB)", msPer(rounds, () => crowded(text))],
    ["one pass per form (15 forms)", msPer(rounds, () => perForm(text))],
    [
      "one regular expression over the text (15 forms)",
      msPer(rounds, () => text.replace(oneExpression, "***")),
    ],
  ];
  return [
    ...rows.map(([what, ms]): [string, string] => [what, `${ms.toFixed(2)} ms (${(ms / copy).toFixed(2)}×)`]),
    ...perExchange(secrets),
  ];
}

/** One small exchange's texts hidden: the same client token every time, then a new one every time. */
function perExchange(configured: readonly string[]): Array<[string, string]> {
  const secrets = new TrafficSecrets(
    { headers: Object.fromEntries(configured.map((v, i) => [`x-key-${i}`, v])) },
    {},
  );
  const texts = [
    "#1 GET /v1/store/orders → 401",
    `{"code":"unauthorized","message":"no such key","status":401}`,
  ];
  const exchange = (token: string) => {
    const hide = secrets.forExchange([token]);
    for (const text of texts) hide(text);
  };
  const run = (tokenOf: (index: number) => string) => {
    const started = performance.now();
    for (let index = 0; index < 1000; index++) exchange(tokenOf(index));
    // Milliseconds for a thousand exchanges: microseconds for one.
    return performance.now() - started;
  };
  for (let warm = 0; warm < 5; warm++) run((index) => `warm-up-token-${index}`);
  const same = median(Array.from({ length: 5 }, () => run(() => "the-one-client-token")));
  let next = 0;
  const distinct = median(Array.from({ length: 5 }, () => run(() => `client-token-${next++}`)));
  return [
    ["one exchange's texts, the same client token each time", `${same.toFixed(1)} µs`],
    ["one exchange's texts, a new client token each time (5,000 over the run)", `${distinct.toFixed(1)} µs`],
  ];
}

function trafficOf(configured: readonly string[]): TrafficSecrets {
  return new TrafficSecrets(
    { headers: Object.fromEntries(configured.map((key, at) => [`x-key-${at}`, key])) },
    {},
  );
}

function msPer(rounds: number, work: () => unknown): number {
  for (let warm = 0; warm < 3; warm++) work();
  return median(
    Array.from({ length: rounds }, () => {
      const started = performance.now();
      work();
      return performance.now() - started;
    }),
  );
}

function orderList(size: number): string {
  const orders: string[] = [];
  let length = 2;
  for (let id = 1; length < size; id++) {
    const order = `{"id":9007199254${String(id).padStart(6, "0")},"petId":${id % 977},"quantity":${id % 9},"shipDate":"2026-11-02T10:00:00Z","status":"placed","complete":false}`;
    orders.push(order);
    length += order.length + 1;
  }
  return Buffer.from(`[${orders.join(",")}]`).toString();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log("| Hiding secrets | time |\n|---|---|");
  for (const [what, cost] of secretHidingCost()) console.log(`| ${what} | ${cost} |`);
}
