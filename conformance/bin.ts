#!/usr/bin/env node
import { readCommandLine } from "../common/command-line.ts";
import { printable } from "../common/printable.ts";
import { PROXY_USAGE, parseProxyOptions } from "./proxy/proxy-options.ts";
import { parseCliOptions, USAGE } from "./suite/options.ts";

// The `petstore-conformance` command, and its `proxy` command. --help and usage errors are answered from the
// options alone; the runner, the proxy and the reporters are loaded once the options pass.
async function start(): Promise<number> {
  if (process.argv[2] === "proxy") {
    const options = readCommandLine(
      () => parseProxyOptions(process.argv.slice(3), process.env),
      PROXY_USAGE,
      "petstore-conformance proxy",
    );
    if (typeof options === "number") return options;
    const { proxyMain } = await import("./proxy/proxy-cli.ts");
    const code = await proxyMain(options, process.env);
    // Out as soon as the output is written: a stop signal relayed to the group again (npm, CI runners) that
    // landed while Node tears the process down, its signal handlers gone, would end it by SIGTERM instead.
    await new Promise((resolve) => process.stdout.write("", resolve));
    await new Promise((resolve) => process.stderr.write("", resolve));
    process.exit(code);
  }
  if (process.argv[2] === "explore") {
    const { EXPLORE_USAGE, parseExploreOptions } = await import("./explore/explore-options.ts");
    const options = readCommandLine(
      () => parseExploreOptions(process.argv.slice(3), process.env),
      EXPLORE_USAGE,
      "petstore-conformance explore",
    );
    if (typeof options === "number") return options;
    const { exploreMain } = await import("./explore/explore-cli.ts");
    return exploreMain(options, process.env);
  }
  const options = readCommandLine(
    () => parseCliOptions(process.argv.slice(2), process.env),
    USAGE,
    "petstore-conformance",
  );
  if (typeof options === "number") return options;
  const { main } = await import("./suite/cli.ts");
  return main(options, process.env);
}

start().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`error: ${printable((error as Error).message)}\n`);
    process.exitCode = 2;
  },
);
