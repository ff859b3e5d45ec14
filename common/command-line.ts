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

/** The values a `parseArgs` table gives, by flag. */
export type FlagValuesOf<Options extends NonNullable<ParseArgsConfig["options"]>> = ReturnType<
  typeof parseFlags<Options>
>;

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
