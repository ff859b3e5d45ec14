import { API_KEY_VARIABLE, headerVariable, type ReplayValue, replayValue } from "../reports/reproduction.ts";
import type { ExploreOptions, ExploreResult } from "./explore.ts";
import { type Program, type SlotKind, slotsUsed } from "./program.ts";

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
  if (!finding) return "// explore found nothing: there is no program to play again.\n";
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
const slotKinds = ${JSON.stringify(kinds)};
const ids = process.argv[2] ? JSON.parse(process.argv[2]) : ${JSON.stringify(ids)};
${REPLAY_BODY}`;
}

type ScriptHeader = [string, ReplayValue];

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

/** Each slot's kind where the program uses it, null elsewhere: the failing run filled them in this order. */
function kindsOf(slotKinds: readonly SlotKind[], program: Program): (SlotKind | null)[] {
  const used = new Set(slotsUsed(program));
  return slotKinds.map((kind, slot) => (used.has(slot) ? kind : null));
}

// What plays the program; it reads `program`, `slotKinds`, `ids`, `target`, `key` and `runHeaders` declared above it.
const REPLAY_BODY = `const taken = { pending: 0, shipped: 0, missing: 0 };
const slotIds = slotKinds.map((kind) => (kind === null ? undefined : String(ids[kind]?.[taken[kind]++] ?? "")));
const orders = slotIds.filter(Boolean);
const start = performance.now();
const since = () => (performance.now() - start).toFixed(1);
const base = target.replace(/\\/+$/, "");
const headers = { authorization: \`Bearer \${key}\` };
for (const [name, value] of Object.entries(runHeaders))
  headers[name] =
    "text" in value
      ? value.text
      : "basicUser" in value
        ? \`Basic \${Buffer.from(\`\${value.basicUser}:\${process.env[value.variable]}\`).toString("base64")}\`
        : value.prefix + process.env[value.variable];

async function step(client, action) {
  const sentAt = since();
  if (action.op === "cancel") {
    const id = slotIds[action.slot];
    const answer = await fetch(\`\${base}/store/orders/\${id}\`, { method: "DELETE", headers }).catch((e) => e);
    const status = answer instanceof Error ? \`no answer (\${answer.message})\` : answer.status;
    if (!(answer instanceof Error)) await answer.arrayBuffer();
    console.log(\`client \${client} cancel \${id} -> \${status}  \${sentAt}-\${since()} ms\`);
    return;
  }
  const answer = await fetch(\`\${base}/store/orders\`, { headers }).catch((e) => e);
  if (answer instanceof Error) return console.log(\`client \${client} list -> no answer  \${sentAt}-\${since()} ms\`);
  const text = await answer.text();
  // Ids read as text: a JSON number past 2^53 would be rounded.
  const listed = new Set([...text.matchAll(/"id"\\s*:\\s*(-?\\d+)/g)].map((match) => BigInt(match[1]).toString()));
  const shown = orders.map((id) => \`\${id} \${listed.has(BigInt(id).toString()) ? "listed" : "not listed"}\`);
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
`;
