import { printable } from "../../common/printable.ts";
/**
 * A request as a person can send it again: a `curl` command or a `fetch` snippet that repeats it exactly,
 * with variables where the key and masked headers were, never their values.
 */

/** A header value to send again: as it was, or rebuilt from a variable that holds a secret. */
export type ReplayValue =
  | { text: string }
  /** `prefix` then the variable's value: `Bearer $PETSTORE_API_KEY`. */
  | { variable: string; prefix: string }
  /** HTTP Basic credentials whose password is the variable's value. */
  | { basicUser: string; variable: string };

export interface Replay {
  method: string;
  url: string;
  headers: Array<[string, ReplayValue]>;
}

/** How the run reached the target, as far as sending a request again needs it. */
export interface ReplayTls {
  insecure?: boolean;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

export type ReproduceAs = "curl" | "fetch";

export const API_KEY_VARIABLE = "PETSTORE_API_KEY";

/** The variable a masked header's value is read from: its name in capitals, `-` as `_`. */
export function headerVariable(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

/**
 * A header value with each secret replaced by its variable: exactly the secret, a scheme and the secret
 * (`Bearer …`), or Basic credentials that hold it.
 */
export function replayValue(value: string, secrets: ReadonlyMap<string, string>): ReplayValue {
  for (const [secret, variable] of secrets) {
    if (secret === "") continue;
    if (value === secret) return { variable, prefix: "" };
    if (value.endsWith(` ${secret}`))
      return { variable, prefix: value.slice(0, value.length - secret.length) };
    const basic = /^Basic\s+(\S+)$/i.exec(value);
    if (basic?.[1]) {
      const decoded = Buffer.from(basic[1], "base64").toString("utf8");
      if (decoded.endsWith(`:${secret}`))
        return { basicUser: decoded.slice(0, decoded.length - secret.length - 1), variable };
    }
  }
  return { text: value };
}

/** The requests as one shell script: one curl command each, in order. */
export function renderCurl(replays: readonly Replay[], tls: ReplayTls = {}): string {
  return replays.map((replay) => curlCommand(replay, tls)).join("\n");
}

function curlCommand(replay: Replay, tls: ReplayTls, statusOnly = false): string {
  // A line break after each answer: bodies do not end with one, and the next command's status line would
  // run on from it.
  const options = [
    statusOnly
      ? "curl -sS --path-as-is -o /dev/null -w '%{http_code}\\n'"
      : "curl -sS -i --path-as-is -w '\\n'",
  ];
  if (tls.insecure) options.push("--insecure");
  if (tls.caFile) options.push(`--cacert ${singleQuoted(tls.caFile)}`);
  if (tls.certFile) options.push(`--cert ${singleQuoted(tls.certFile)}`);
  if (tls.keyFile) options.push(`--key ${singleQuoted(tls.keyFile)}`);
  options.push(`-X ${replay.method}`, singleQuoted(replay.url));
  const lines = [options.join(" ")];
  for (const [name, value] of replay.headers) lines.push(`-H ${shellHeader(name, value)}`);
  return lines.join(" \\\n  ");
}

function shellHeader(name: string, value: ReplayValue): string {
  if ("text" in value) return singleQuoted(`${name}: ${value.text}`);
  if ("basicUser" in value) {
    const credentials = `${doubleQuotedText(value.basicUser)}:\${${value.variable}}`;
    return `"${doubleQuotedText(name)}: Basic $(printf '%s' "${credentials}" | base64 | tr -d '\\n')"`;
  }
  return `"${doubleQuotedText(`${name}: ${value.prefix}`)}\${${value.variable}}"`;
}

/** The requests as a JavaScript module for Node 20 or a browser console: one fetch each, in order. */
export function renderFetch(replays: readonly Replay[], tls: ReplayTls = {}): string {
  const lines = fetchTlsNotes(tls);
  for (const replay of replays) {
    const headers = replay.headers.map(([name, value]) => `${JSON.stringify(name)}: ${jsValue(value)}`);
    lines.push(
      "{",
      `  const response = await fetch(${JSON.stringify(replay.url)}, {`,
      `    method: ${JSON.stringify(replay.method)},`,
      `    headers: { ${headers.join(", ")} },`,
      "  });",
      `  console.log(${JSON.stringify(`${replay.method} ${replay.url} →`)}, response.status, await response.text());`,
      "}",
    );
  }
  return lines.join("\n");
}

function fetchTlsNotes(tls: ReplayTls): string[] {
  const lines: string[] = [];
  if (tls.insecure) lines.push("// The run checked no certificate: run with NODE_TLS_REJECT_UNAUTHORIZED=0");
  if (tls.caFile) lines.push(`// The run trusted another CA: run with NODE_EXTRA_CA_CERTS=${tls.caFile}`);
  return lines;
}

function jsValue(value: ReplayValue): string {
  if ("text" in value) return JSON.stringify(value.text);
  const secret = `\${process.env.${value.variable}}`;
  if ("basicUser" in value)
    return `\`Basic \${Buffer.from(\`${templateText(value.basicUser)}:${secret}\`).toString("base64")}\``;
  return `\`${templateText(value.prefix)}${secret}\``;
}

export function renderReplays(replays: readonly Replay[], as: ReproduceAs, tls: ReplayTls): string {
  return as === "fetch" ? renderFetch(replays, tls) : renderCurl(replays, tls);
}

/**
 * One request sent `count` times at once, as a race needs: requests sent one after another cannot show
 * it. Each answer's status is printed; the order must be as it was before the run (pending) again.
 */
export function renderRace(replay: Replay, count: number, as: ReproduceAs, tls: ReplayTls): string {
  const why = `A race: ${count} requests at once, each printing its status; the order must be pending again, and a race may take a few tries.`;
  if (as === "curl") {
    const command = curlCommand(replay, tls, true).replace(/\n {2}/g, "\n    ");
    return [`# ${why}`, `for i in $(seq ${count}); do`, `  ${command} &`, "done", "wait"].join("\n");
  }
  const headers = replay.headers.map(([name, value]) => `${JSON.stringify(name)}: ${jsValue(value)}`);
  return [
    `// ${why}`,
    ...fetchTlsNotes(tls),
    "{",
    `  const send = () => fetch(${JSON.stringify(replay.url)}, {`,
    `    method: ${JSON.stringify(replay.method)},`,
    `    headers: { ${headers.join(", ")} },`,
    "  });",
    `  const answers = await Promise.all(Array.from({ length: ${count} }, send));`,
    `  console.log(${JSON.stringify(`${replay.method} ${replay.url} ×${count} →`)}, answers.map((answer) => answer.status));`,
    "}",
  ].join("\n");
}

function singleQuoted(text: string): string {
  // A control character or an invisible one stays exact and never reaches the terminal raw: ANSI-C quoting.
  if (printable(text) !== text) return `$'${ansiC(text)}'`;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function ansiC(text: string): string {
  return [...Buffer.from(text, "utf8")]
    .map((byte) =>
      byte < 0x20 || byte >= 0x7f || byte === 0x27 || byte === 0x5c
        ? `\\x${byte.toString(16).padStart(2, "0")}`
        : String.fromCharCode(byte),
    )
    .join("");
}

function doubleQuotedText(text: string): string {
  return text.replace(/[\\"$`]/g, (character) => `\\${character}`);
}

function templateText(text: string): string {
  return text.replace(/[\\`$]/g, (character) => `\\${character}`);
}
