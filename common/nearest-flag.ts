// Apart from command-line.ts, whose parsing types a module's declarations cannot name: a module that only
// suggests a name imports this alone.

/** The flag a mistyped one most likely meant: within two edits of it, or one it begins; undefined if none. */
export function nearestFlag(given: string, flags: readonly string[]): string | undefined {
  const name = given.replace(/^-+/, "").split("=")[0] ?? "";
  if (name === "") return undefined;
  let best: { flag: string; distance: number } | undefined;
  for (const flag of flags) {
    const distance = flag.startsWith(name) && name.length >= 3 ? 1 : editDistance(name, flag);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { flag, distance };
  }
  return best?.flag;
}

/** Levenshtein's distance, a transposition counting as one edit (--prot for --port). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(
        ((rows[i - 1] as number[])[j] as number) + 1,
        (row[j - 1] as number) + 1,
        ((rows[i - 1] as number[])[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}
