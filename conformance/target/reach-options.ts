import { rootCertificates } from "node:tls";
import type { ParseArgsConfig } from "node:util";
import { FileRefused, readBoundedFile } from "../../common/bounded-file.ts";
import { UsageError } from "../../common/command-line.ts";
import { parseByteSize, parseWholeNumber } from "../../common/option-values.ts";
import { printable } from "../../common/printable.ts";
import type { ReaderLimits } from "../judging/list-judge.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { TlsOptions } from "./http-client.ts";
import { headerProblem } from "./masked-headers.ts";

// What the suite and the validating proxy share to reach a deployment and read its answers.

/** How a deployment is reached: the same flags for the suite and for the validating proxy. */
export const REACH_FLAGS = {
  "ca-file": { type: "string", multiple: true },
  cert: { type: "string" },
  key: { type: "string" },
  insecure: { type: "boolean" },
  proxy: { type: "string" },
  header: { type: "string", multiple: true },
  "header-from-env": { type: "string", multiple: true },
  "show-header": { type: "string", multiple: true },
  timeout: { type: "string" },
  deadline: { type: "string" },
  "max-body": { type: "string" },
  "max-depth": { type: "string" },
  "max-string": { type: "string" },
  "max-number": { type: "string" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

export function readReaderLimits(values: {
  "max-depth"?: string | undefined;
  "max-string"?: string | undefined;
  "max-number"?: string | undefined;
}): ReaderLimits | undefined {
  const limits: ReaderLimits = {
    ...(values["max-depth"] !== undefined
      ? { maxDepth: parseWholeNumber("--max-depth", values["max-depth"]) }
      : {}),
    ...(values["max-string"] !== undefined
      ? { maxStringBytes: parseByteSize("--max-string", values["max-string"]) }
      : {}),
    ...(values["max-number"] !== undefined
      ? { maxNumberChars: parseWholeNumber("--max-number", values["max-number"]) }
      : {}),
  };
  return Object.keys(limits).length > 0 ? limits : undefined;
}

/** The bounds of the judge's JSON reader, which JSON itself does not set: the same flags in both commands. */
export const READER_LIMITS_HELP = `  --max-depth N             levels of nesting the judge reads at most (default 64)
  --max-string SIZE         one string's bytes at most (default 16MiB)
  --max-number N            one number's characters at most (default 4096); a body past any of these
                            is reported as not judged, naming the limit, never as invalid JSON`;

/** What the flags both commands share (REACH_FLAGS, the reader's limits, --max-memory) are named by in messages. */
export const REACH_SETTING_FLAGS = {
  caFile: "--ca-file",
  certAndKey: "--cert and --key",
  insecure: "--insecure",
  proxy: "--proxy",
  headers: "--header",
  deadline: "--deadline",
  maxBody: "--max-body",
  maxDepth: "--max-depth",
  maxString: "--max-string",
  maxNumber: "--max-number",
  maxMemory: "--max-memory",
} satisfies Partial<SettingNames>;

/**
 * The headers of --header 'Name: value' and --header-from-env Name=VARIABLE (whose value is read from the
 * environment, so that a credential need not sit in the command line every process can read). Each is
 * checked here by the rules Node sends headers by, so that a bad one stops the command at once naming its
 * flag, never a request later.
 */
export function readHeaders(
  values: { header?: string[]; "header-from-env"?: string[] },
  env: NodeJS.ProcessEnv,
): Record<string, string> {
  const headers = parseHeaders(values.header ?? []);
  for (const spec of values["header-from-env"] ?? []) {
    const equals = spec.indexOf("=");
    const name = equals === -1 ? "" : spec.slice(0, equals).trim();
    const variable = spec.slice(equals + 1).trim();
    if (equals === -1 || variable === "" || !HEADER_NAME.test(name)) {
      throw new UsageError(
        `--header-from-env takes Name=VARIABLE (got "${printable(spec.split("=")[0] ?? "")}…")`,
      );
    }
    const value = env[variable];
    if (value === undefined || value === "") {
      throw new UsageError(
        `--header-from-env ${name}: the environment variable ${variable} is ${value === "" ? "empty" : "not set"}`,
      );
    }
    Object.assign(headers, checkedHeader("--header-from-env", name, value.trim()));
  }
  return headers;
}

// An HTTP token (RFC 9110 §5.6.2), as Node's validateHeaderName has it.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function parseHeaders(specs: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const spec of specs) {
    const colon = spec.indexOf(":");
    const name = colon === -1 ? "" : spec.slice(0, colon).trim();
    // Without a colon the text may be the credential itself: it is not repeated.
    if (colon === -1)
      throw new UsageError(
        "--header takes 'Name: value' (the one given has no colon; its text is not shown)",
      );
    if (!HEADER_NAME.test(name))
      throw new UsageError(`--header takes 'Name: value' (got "${printable(name)}: …")`);
    Object.assign(headers, checkedHeader("--header", name, spec.slice(colon + 1).trim()));
  }
  return headers;
}

function checkedHeader(flag: string, name: string, value: string): Record<string, string> {
  if (["authorization", "x-mock-session"].includes(name.toLowerCase())) {
    throw new UsageError(`${flag} ${name}: the run sets this one itself (--api-key, --session)`);
  }
  const problem = headerProblem(name, value);
  if (problem !== undefined) throw new UsageError(`${flag} ${problem}`);
  return { [name]: value };
}

/** TLS settings from the flags: extra CAs are added to Node's roots (and NODE_EXTRA_CA_CERTS), not instead. */
export function readTls(
  values: { "ca-file"?: string[]; cert?: string; key?: string; insecure?: boolean },
  env: NodeJS.ProcessEnv,
): TlsOptions | undefined {
  const read = (flag: string, path: string) => {
    try {
      return readBoundedFile(path, MAX_PEM_BYTES, "a PEM file");
    } catch (error) {
      if (error instanceof FileRefused) throw new UsageError(`${flag} ${path}: ${error.message}`);
      throw error;
    }
  };
  if ((values.cert === undefined) !== (values.key === undefined)) {
    throw new UsageError("--cert and --key go together");
  }
  const files = values["ca-file"] ?? [];
  const extra =
    files.length > 0 && env.NODE_EXTRA_CA_CERTS ? [read("NODE_EXTRA_CA_CERTS", env.NODE_EXTRA_CA_CERTS)] : [];
  const tls: TlsOptions = {
    ...(files.length > 0
      ? { ca: [...rootCertificates, ...extra, ...files.map((file) => read("--ca-file", file))] }
      : {}),
    ...(values.cert !== undefined ? { cert: read("--cert", values.cert) } : {}),
    ...(values.key !== undefined ? { key: read("--key", values.key) } : {}),
    ...(values.insecure ? { insecure: true } : {}),
  };
  if (Object.keys(tls).length === 0) return undefined;
  const paths = {
    ...(files[0] !== undefined ? { ca: files[0] } : {}),
    ...(values.cert !== undefined ? { cert: values.cert } : {}),
    ...(values.key !== undefined ? { key: values.key } : {}),
  };
  return Object.keys(paths).length > 0 ? { ...tls, files: paths } : tls;
}

/** A PEM bundle of every public CA is about 200 KiB; a file past this is no certificate file. */
const MAX_PEM_BYTES = 16 * 1024 * 1024;

/**
 * A setting given by neither its flag nor its variable: said "is empty" when the flag was given "" (an
 * unset variable quoted) or the variable is set to "".
 */
export function required(flag: string, variable: string, env: NodeJS.ProcessEnv, given?: string): string {
  if (given === "") return `${flag} is empty: give it a value (or set ${variable})`;
  return env[variable] === ""
    ? `${flag} is required, and the environment variable ${variable} is empty`
    : `${flag} (or ${variable}) is required`;
}
