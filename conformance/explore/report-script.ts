import type { History } from "../model/history.ts";
import { API_KEY_VARIABLE, headerVariable, type ReplayValue, replayValue } from "../reports/reproduction.ts";
import type { ExploreOptions, ExploreResult } from "./explore.ts";
import { type Program, type SlotKind, slotsUsed } from "./program.ts";
import { coverageLine } from "./report-pretty.ts";

/** What the run sent on every request besides the key, as far as playing it again needs it. */
export type ScriptReach = Partial<Pick<ExploreOptions, "apiKey">> &
  Pick<ExploreOptions, "session" | "headers" | "showHeaders">;

/**
 * A plain Node script (no dependency) that plays the minimal program again with the same concurrency: one
 * lane per client, each step after its pause, every answer printed with its instants. It sends what the
 * run sent on every request: its X-Mock-Session, and its --header and --header-from-env headers, those
 * shown (--show-header) as they were, the others read at replay time from a variable named after the
 * header, as the suite's reproductions do. The key is read from PETSTORE_API_KEY. No secret is written
 * into it; fresh orders are given as a JSON argument.
 */
export function renderExploreScript(result: ExploreResult, reach: ScriptReach = {}): string {
  const finding = result.finding;
  if (!finding)
    return `// explore found nothing (${coverageLine(result)}): there is no program to play again.\n`;
  const program: Program = finding.minimal.program;
  const kinds = kindsOf(result.slotKinds, program);
  const given = finding.minimal.history.given;
  const ids = { pending: given.pending, shipped: given.shipped, missing: given.missing };
  const headers = replayedHeaders(reach);
  const variables = [
    ...new Set(headers.flatMap(([, value]) => ("variable" in value ? [value.variable] : []))),
  ].filter((variable) => variable !== API_KEY_VARIABLE);
  return `#!/usr/bin/env node
// Plays again the minimal program petstore-conformance explore found (seed ${result.seed}), with the same
// concurrency: each client's steps in order, each after its pause, all clients at once.
//
//   PETSTORE_API_KEY=…${variables.map((variable) => ` ${variable}=…`).join("")} node ${"this-script.mjs"} ['{"pending":["…"],"shipped":["…"],"missing":["…"]}']
//
// It exits 1 when every answer it compared is the failing run's (the failure is likely seen again), 0 when
// one is not, and 2 when it cannot play.
${headerComment(headers)}// PETSTORE_BASE_URL overrides the target. Without the argument it uses the orders of the failing run, which
// that run has cancelled already: give fresh pending orders to see the failure again.
const target = process.env.PETSTORE_BASE_URL || ${JSON.stringify(result.target)};
const key = process.env.PETSTORE_API_KEY;
if (!key) {
  console.error("set PETSTORE_API_KEY to the API key");
  process.exit(2);
}
const runHeaders = ${JSON.stringify(Object.fromEntries(headers.map(([name, value]) => [name, value])))};
for (const [name, value] of Object.entries(runHeaders)) {
  if (!("variable" in value)) continue;
  if (!process.env[value.variable]) {
    console.error(\`set \${value.variable} to the value of the \${name} header the run sent\`);
    process.exit(2);
  }
}
const program = ${JSON.stringify(program)};
// Each step's answer in the failing run: its status, and for a list whether it showed each order, in slot order.
const failingRun = ${JSON.stringify(failingAnswers(finding.minimal.history, program, kinds))};
const slotKinds = ${JSON.stringify(kinds)};
// The ids of each kind the program needs: an argument that gives fewer, or anything but strings of digits,
// is refused, so that no request goes to an id nobody named.
const needed = ${JSON.stringify(neededIds(kinds))};
${IDS_ARGUMENT}const ids = process.argv.length > 2 ? idsArgument(process.argv.slice(2)) : ${JSON.stringify(ids)};
${REPLAY_BODY}`;
}

type ScriptHeader = [string, ReplayValue];

/** A step's answer as the script compares it: the status ("no answer"), and what a list showed. */
type StepAnswer = string;

/**
 * Each client's answers in the failing run, step by step, said as the script says its own: the history's
 * operations of a client are its steps in order. Null for a client whose steps were not all sent.
 */
function failingAnswers(
  history: History,
  program: Program,
  kinds: readonly (SlotKind | null)[],
): (StepAnswer[] | null)[] {
  const ids = slotIdsOf(history.given, kinds).filter((id): id is string => id !== undefined);
  return program.map((steps, client) => {
    const operations = history.operations.filter((operation) => operation.client === client);
    if (operations.length !== steps.length) return null;
    return operations.map((operation) => {
      const status = operation.status === null ? "no answer" : String(operation.status);
      if (operation.op === "cancel" || operation.shown === null || operation.status !== 200) return status;
      return `${status} (${ids.map((id) => (operation.shown?.has(id) ? "listed" : "not listed")).join(", ")})`;
    });
  });
}

/** The id of each used slot, taken from the given orders in slot order, as the run filled them. */
function slotIdsOf(given: History["given"], kinds: readonly (SlotKind | null)[]): (string | undefined)[] {
  const taken = { pending: 0, shipped: 0, missing: 0 };
  return kinds.map((kind) => (kind === null ? undefined : given[kind][taken[kind]++]));
}

/**
 * The run's session and headers: a masked header's value never, only the variable it is read from; a shown
 * value or the session that holds the key or a masked value is rebuilt from its variable, and one that still
 * holds a secret anywhere is read from its own variable whole.
 */
function replayedHeaders(reach: ScriptReach): ScriptHeader[] {
  const shown = new Set((reach.showHeaders ?? []).map((name) => name.toLowerCase()));
  const entries = Object.entries(reach.headers ?? {});
  const secrets = new Map<string, string>(reach.apiKey ? [[reach.apiKey, API_KEY_VARIABLE]] : []);
  for (const [name, value] of entries)
    if (!shown.has(name.toLowerCase()) && value !== "") secrets.set(value, headerVariable(name));
  const replayed = (name: string, value: string): ScriptHeader => {
    const replay = replayValue(value, secrets);
    const holdsSecret = "text" in replay && [...secrets.keys()].some((secret) => value.includes(secret));
    return [name, holdsSecret ? { variable: headerVariable(name), prefix: "" } : replay];
  };
  const headers = entries.map(
    ([name, value]): ScriptHeader =>
      shown.has(name.toLowerCase())
        ? replayed(name, value)
        : [name, { variable: headerVariable(name), prefix: "" }],
  );
  if (reach.session !== undefined) headers.push(replayed("X-Mock-Session", reach.session));
  return headers;
}

/** The usage comment's lines on the headers: names only (HTTP tokens), never a value. */
function headerComment(headers: readonly ScriptHeader[]): string {
  if (headers.length === 0) return "";
  const each = headers.map(([name, value]) =>
    "text" in value ? `${name} as the run sent it` : `${name} from $${value.variable}`,
  );
  return `// Every request carries the run's headers besides the key: ${each.join(", ")}.\n//\n`;
}

/** How many ids of each kind the used slots take. */
function neededIds(kinds: readonly (SlotKind | null)[]): Record<SlotKind, number> {
  const needed = { pending: 0, shipped: 0, missing: 0 };
  for (const kind of kinds) if (kind !== null) needed[kind]++;
  return needed;
}

// The script's argument, parsed once: one JSON object of arrays of int64 ids as strings of digits, with
// at least as many of each kind as the program needs. It reads `needed`, declared above it.
const IDS_ARGUMENT = `function idsArgument(args) {
  const usage = 'give one argument, JSON {"pending":["…"],"shipped":["…"],"missing":["…"]} of strings of digits';
  const refuse = (why) => {
    console.error(\`error: \${why}; \${usage}\`);
    process.exit(2);
  };
  if (args.length !== 1) refuse(\`\${args.length} arguments given\`);
  let value;
  try {
    value = JSON.parse(args[0]);
  } catch (error) {
    refuse(\`the argument is not JSON (\${error.message})\`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) refuse("the argument is not a JSON object");
  for (const key of Object.keys(value)) if (!(key in needed)) refuse(\`unknown key \${JSON.stringify(key)}\`);
  const ids = {};
  for (const [kind, count] of Object.entries(needed)) {
    const given = value[kind] ?? [];
    if (!Array.isArray(given)) refuse(\`\${kind} is not an array\`);
    given.forEach((id, at) => {
      const int64 = typeof id === "string" && /^-?\\d{1,20}$/.test(id) && BigInt(id) >= -(2n ** 63n) && BigInt(id) < 2n ** 63n;
      if (!int64) refuse(\`\${kind}[\${at}] is not a string of digits within int64 (got \${JSON.stringify(id)})\`);
    });
    if (given.length < count) refuse(\`the program needs \${count} \${kind} id\${count === 1 ? "" : "s"}, \${given.length} given\`);
    ids[kind] = given;
  }
  return ids;
}
`;

/** Each slot's kind where the program uses it, null elsewhere: the failing run filled them in this order. */
function kindsOf(slotKinds: readonly SlotKind[], program: Program): (SlotKind | null)[] {
  const used = new Set(slotsUsed(program));
  return slotKinds.map((kind, slot) => (used.has(slot) ? kind : null));
}

// What plays the program; it reads `program`, `failingRun`, `slotKinds`, `ids`, `target`, `key` and
// `runHeaders` declared above it.
const REPLAY_BODY = `const taken = { pending: 0, shipped: 0, missing: 0 };
const slotIds = slotKinds.map((kind) => (kind === null ? undefined : String(ids[kind]?.[taken[kind]++] ?? "")));
const orders = slotIds.filter(Boolean);
const base = target.replace(/\\/+$/, "");
const headers = { authorization: \`Bearer \${key}\` };
for (const [name, value] of Object.entries(runHeaders))
  headers[name] =
    "text" in value
      ? value.text
      : "basicUser" in value
        ? \`Basic \${Buffer.from(\`\${value.basicUser}:\${process.env[value.variable]}\`).toString("base64")}\`
        : value.prefix + process.env[value.variable];

// One list first, untimed: Node's first fetch loads its client, which would delay the first step by far
// more than the pauses being replayed. A list changes nothing.
await fetch(\`\${base}/store/orders\`, { headers }).then((answer) => answer.arrayBuffer()).catch(() => {});
const start = performance.now();
const since = () => (performance.now() - start).toFixed(1);
const answers = program.map(() => []);

// A 429 still refused after the run's retries was no answer to the run: said the same here.
const said = (answer) => (answer instanceof Error || answer.status === 429 ? "no answer" : String(answer.status));

async function step(client, action) {
  const sentAt = since();
  if (action.op === "cancel") {
    const id = slotIds[action.slot];
    const answer = await fetch(\`\${base}/store/orders/\${id}\`, { method: "DELETE", headers }).catch((e) => e);
    const status = answer instanceof Error ? \`no answer (\${answer.message})\` : answer.status;
    if (!(answer instanceof Error)) await answer.arrayBuffer();
    answers[client].push(said(answer));
    console.log(\`client \${client} cancel \${id} -> \${status}  \${sentAt}-\${since()} ms\`);
    return;
  }
  const answer = await fetch(\`\${base}/store/orders\`, { headers }).catch((e) => e);
  if (answer instanceof Error) {
    answers[client].push("no answer");
    return console.log(\`client \${client} list -> no answer  \${sentAt}-\${since()} ms\`);
  }
  const text = await answer.text();
  // Ids read as text: a JSON number past 2^53 would be rounded.
  const listed = new Set([...text.matchAll(/"id"\\s*:\\s*(-?\\d+)/g)].map((match) => BigInt(match[1]).toString()));
  const isListed = orders.map((id) => listed.has(BigInt(id).toString()));
  const shown = orders.map((id, at) => \`\${id} \${isListed[at] ? "listed" : "not listed"}\`);
  answers[client].push(
    answer.status === 200 ? \`200 (\${isListed.map((is) => (is ? "listed" : "not listed")).join(", ")})\` : said(answer),
  );
  console.log(\`client \${client} list -> \${answer.status} (\${shown.join(", ")})  \${sentAt}-\${since()} ms\`);
}

await Promise.all(
  program.map(async (steps, client) => {
    for (const { wait, action } of steps) {
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await step(client, action);
    }
  }),
);

// The answers beside the failing run's; whether they break the spec's model is explore's to judge (the
// instants matter for a stale read), so this says only whether they are the same.
const differ = [];
const unsent = [];
let compared = 0;
failingRun.forEach((expected, client) => {
  if (expected === null) return unsent.push(client);
  expected.forEach((then, at) => {
    compared++;
    const now = answers[client][at];
    // A list the failing run did not read whole is compared by its status alone.
    const same = now === then || (!then.includes("(") && now?.startsWith(\`\${then} (\`));
    if (!same) differ.push(\`client \${client} step \${at + 1}: \${now}, in the failing run \${then}\`);
  });
});
// As a test that fails when the failure is seen again: 1 then, so that a fix is checked by a 0.
const reproduced = compared > 0 && differ.length === 0;
process.exitCode = reproduced ? 1 : 0;
const notCompared = unsent.length > 0 ? \` (not compared: clients \${unsent.join(", ")}, whose steps the failing run did not all send)\` : "";
console.log(
  compared === 0
    ? \`no answer compared with the failing run's\${notCompared}\`
    : reproduced
      ? \`every answer (\${compared}) is the failing run's: the failure is likely seen again (a stale read also needs its instants)\${notCompared}\`
      : \`\${compared - differ.length} of \${compared} answers are the failing run's; not the same: \${differ.join("; ")}\${notCompared}\`,
);
`;
