import { printedVersion, readCommandLine } from "../common/command-line.ts";
import { parseCliOptions, USAGE } from "./options.ts";

// The `petstore-mock` command. Only the options are read before deciding: --help and usage errors never load
// the server, and the server is loaded as one module once they pass.
async function main(): Promise<number> {
  if (printedVersion(process.argv.slice(2))) return 0;
  const options = readCommandLine(
    () => parseCliOptions(process.argv.slice(2), process.env),
    USAGE,
    "petstore-mock",
  );
  if (typeof options === "number") return options;
  const { serve } = await import("./serve.ts");
  return serve(options);
}

main().then(
  (code) => process.exit(code),
  (error) => {
    // "error:" as every other line of the command says it; the stack's frames after it, for a report.
    const { message, stack } = error instanceof Error ? error : { message: String(error), stack: "" };
    const frames = (stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
    process.stderr.write(`error: ${message}\n${frames.map((line) => `${line}\n`).join("")}`);
    process.exit(1);
  },
);
