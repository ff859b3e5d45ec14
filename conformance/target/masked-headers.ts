import { validateHeaderName, validateHeaderValue } from "node:http";
import { printable } from "../../common/printable.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import { ConformanceUsageError } from "./target.ts";

/**
 * The `--header` values reports must not show: every one, unless `--show-header` names it. The suite and
 * the validating proxy read them the same way.
 */
export interface MaskedHeaders {
  /** Lower-case names whose values are shown as `***`. */
  names: Set<string>;
  /** The masked headers as given, name and value. */
  entries: Array<[string, string]>;
}

/**
 * The headers added to every request, checked once at start by Node's own rules (a name that is no HTTP
 * token, a value with CR, LF, NUL or a character past U+00FF is a usage error naming `names.headers`), and
 * which of them are masked.
 */
export function maskedHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  showHeaders: readonly string[] | undefined,
  names: Pick<SettingNames, "headers">,
): MaskedHeaders {
  for (const [name, value] of Object.entries(headers ?? {})) {
    const problem = headerProblem(name, value);
    if (problem !== undefined) throw new ConformanceUsageError(`${names.headers} ${problem}`);
  }
  const shown = new Set((showHeaders ?? []).map((name) => name.toLowerCase()));
  const entries = Object.entries(headers ?? {}).filter(([name]) => !shown.has(name.toLowerCase()));
  return { names: new Set(entries.map(([name]) => name.toLowerCase())), entries };
}

/**
 * Why a header cannot be sent as given, by the rules `http.request` applies (which throws on it), in words
 * that start with the name and never show the value, which may be a secret; undefined when it can.
 */
export function headerProblem(name: string, value: string): string | undefined {
  try {
    validateHeaderName(name);
  } catch {
    return `"${printable(name)}": a header name is one HTTP token (letters, digits and !#$%&'*+-.^_\`|~)`;
  }
  try {
    validateHeaderValue(name, value);
  } catch {
    return `${name}: the value holds a character no header can carry (CR, LF, NUL or another control character, or one past U+00FF)`;
  }
  return undefined;
}
