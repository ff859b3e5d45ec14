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

export function maskedHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  showHeaders: readonly string[] | undefined,
): MaskedHeaders {
  const shown = new Set((showHeaders ?? []).map((name) => name.toLowerCase()));
  const entries = Object.entries(headers ?? {}).filter(([name]) => !shown.has(name.toLowerCase()));
  return { names: new Set(entries.map(([name]) => name.toLowerCase())), entries };
}
