import { readFileSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { nearestFlag } from "./nearest-flag.ts";
import { packageFile } from "./package-root.ts";

export { nearestFlag };

/** A command line that cannot run: exit code 2 with one line naming the problem. */
export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * Strict flag parsing (no positionals, no unknown flags), with parse errors as UsageErrors. `wraps`: the
 * command runs a COMMAND given after `--`, so an argument that is no option is most likely one without it.
 */
export function parseFlags<Options extends NonNullable<ParseArgsConfig["options"]>>(
  argv: readonly string[],
  options: Options,
  wraps?: { command: string },
): FlagValuesOf<Options> {
  try {
    return parseArgs({ args: [...argv], strict: true, allowPositionals: false, options }).values;
  } catch (error) {
    throw usageErrorOf(error as NodeJS.ErrnoException, Object.keys(options), wraps);
  }
}

/** One of parseArgs' errors said in one line, with what to do about it. */
function usageErrorOf(
  { code, message }: NodeJS.ErrnoException,
  flags: readonly string[],
  wraps: { command: string } | undefined,
): UsageError {
  // Node names a flag with a short form as '-k, --name <value>': the long name is the one given here.
  const quoted = /'(-[^']*)'/.exec(message)?.[1];
  const flag = (quoted && /--[\w-]+/.exec(quoted)?.[0]) ?? quoted;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && flag !== undefined) {
    const near = nearestFlag(flag, flags);
    return new UsageError(`unknown option ${flag}${near ? `: did you mean --${near}?` : ""}`);
  }
  // An unquoted variable that was empty leaves the flag followed by the next one.
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && flag !== undefined && /ambiguous/.test(message))
    return new UsageError(
      `${flag} is followed by another option, not by its value: give it one (quote a variable that may be empty), or ${flag}=-VALUE for a value that begins with a dash`,
    );
  // ...or the flag last, with nothing after it.
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && flag !== undefined && /missing/.test(message))
    return new UsageError(
      `${flag} needs a value after it, and none was given (quote a variable that may be empty)`,
    );
  const argument = /argument '([^']*)'/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL" && argument !== undefined)
    return new UsageError(
      wraps
        ? `unexpected argument '${argument}': to run a command, put -- before it (${wraps.command} [options] -- ${argument} ...)`
        : `unexpected argument '${argument}': this command takes options only (did a value lose its option, or its quotes?)`,
    );
  // Node's messages may run over several lines: one line, as every usage error is said.
  return new UsageError(message.replace(/\s*\n\s*/g, " "));
}

/** `--version` among a command's options: the package's version is printed, and nothing else is done. */
export function printedVersion(args: readonly string[]): boolean {
  const cut = args.indexOf("--");
  if (!(cut === -1 ? args : args.slice(0, cut)).includes("--version")) return false;
  const { version } = JSON.parse(readFileSync(packageFile("package.json"), "utf8")) as { version: string };
  process.stdout.write(`${version}\n`);
  return true;
}

/** The values a `parseArgs` table gives, by flag, read strictly with no positionals. */
export type FlagValuesOf<Options extends NonNullable<ParseArgsConfig["options"]>> = ReturnType<
  typeof parseArgs<{ args: string[]; strict: true; allowPositionals: false; options: Options }>
>["values"];

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
