import { readCommandLine } from "../common/command-line.ts";
import { parseCliOptions, USAGE } from "./options.ts";

// The `petstore-mock` command. Only the options are read before deciding: --help and usage errors never load
// the server, and the server is loaded as one module once they pass.
async function main(): Promise<number> {
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
    process.stderr.write(`error: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  },
);
