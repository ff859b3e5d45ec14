import { type ParseArgsConfig, parseArgs } from "node:util";

/** A command line that cannot run: exit code 2 with one line naming the problem. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Strict flag parsing (no positionals, no unknown flags), with parse errors as UsageErrors. */
export function parseFlags<Options extends NonNullable<ParseArgsConfig["options"]>>(
  argv: readonly string[],
  options: Options,
) {
  try {
    return parseArgs({ args: [...argv], strict: true, allowPositionals: false, options }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * A command line cut at its first `--`: the options before it, and the COMMAND after it that the command runs
 * wrapped (none without `--`). A `--` with nothing after it is a usage error.
 */
export function splitAtCommand(argv: readonly string[]): { options: string[]; command?: string[] } {
  const cut = argv.indexOf("--");
  if (cut === -1) return { options: [...argv] };
  const command = argv.slice(cut + 1);
  if (command.length === 0) throw new UsageError("-- must be followed by the COMMAND to run");
  return { options: argv.slice(0, cut), command };
}

/**
 * Reads a command line the way both commands do: the options, or the exit code already decided (2 after one
 * line naming the problem and where the usage is, 0 after printing the help).
 */
export function readCommandLine<Options extends { help: boolean }>(
  read: () => Options,
  usage: string,
  helpCommand: string,
): Options | number {
  let options: Options;
  try {
    options = read();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`error: ${error.message} (see ${helpCommand} --help)\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(usage);
    return 0;
  }
  return options;
}

const BYTE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/** A size as plain bytes or with a unit: 500000, 90MB, 2GiB (kB, MB, GB are powers of 1000; KiB… of 1024). */
export function parseByteSize(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = BYTE_UNITS[(match?.[2] ?? "").toLowerCase()];
  const bytes = match && unit !== undefined ? Math.floor(Number(match[1]) * unit) : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1)
    throw new UsageError(`${flag} must be a size like 500000, 90MB or 2GiB (got "${text}")`);
  return bytes;
}
