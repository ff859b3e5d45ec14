import { type ParseArgsConfig, parseArgs } from "node:util";

/** A command line that cannot run: exit code 2 with the message and the usage. */
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
 * Reads a command line the way both commands do: the options, or the exit code already decided
 * (2 after printing the problem and the usage, 0 after printing the help).
 */
export function readCommandLine<Options extends { help: boolean }>(
  read: () => Options,
  usage: string,
): Options | number {
  let options: Options;
  try {
    options = read();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`error: ${error.message}\n\n${usage}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(usage);
    return 0;
  }
  return options;
}
