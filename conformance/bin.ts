#!/usr/bin/env node
import { readCommandLine } from "../common/command-line.ts";
import { parseCliOptions, USAGE } from "./options.ts";

// The `petstore-conformance` command. --help and usage errors are answered from the options alone; the
// runner and the reporters are loaded once the options pass.
async function start(): Promise<number> {
  const options = readCommandLine(() => parseCliOptions(process.argv.slice(2), process.env), USAGE);
  if (typeof options === "number") return options;
  const { main } = await import("./cli.ts");
  return main(options, process.env);
}

start().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    process.exitCode = 2;
  },
);
