import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { processFolder } from "./temp-folder.ts";

const PACKAGE_NAME = "petstore-store-orders-mock";
/** The commands' sources, for a wrapper run from them (tsx) rather than from the build. */
const SOURCE_COMMANDS: Record<string, string> = {
  "petstore-mock": "server/main.ts",
  "petstore-conformance": "conformance/bin.ts",
};

/**
 * PATH for a wrapped COMMAND with a folder of the package's commands first, as `npm run` puts
 * node_modules/.bin there: `petstore-mock … -- sh -c 'petstore-conformance …'` then finds the other command
 * however the wrapper was started (npx, node_modules/.bin/…, node …/dist/…, a clone's sources). Each entry
 * runs the same Node and the same copy of the package as the wrapper. PATH unchanged when the package's
 * folder cannot be found.
 */
export function pathWithPackageCommands(path: string | undefined): string | undefined {
  const commands = packageCommands();
  if (commands === undefined) return path;
  // Named after this wrapper: one a wrapper killed with SIGKILL left is removed by the next.
  const folder = processFolder("petstore-commands-");
  for (const [name, argv] of Object.entries(commands)) {
    writeFileSync(join(folder, name), `#!/bin/sh\nexec ${argv.map(shellQuoted).join(" ")} "$@"\n`, {
      mode: 0o755,
    });
  }
  return path ? `${folder}${delimiter}${path}` : folder;
}

/** Each command of the package as the argv that runs it; undefined outside the package. */
function packageCommands(): Record<string, string[]> | undefined {
  const main = process.argv[1];
  if (main === undefined || !existsSync(main)) return undefined;
  const file = realpathSync(main);
  const root = packageRoot(dirname(file));
  if (root === undefined) return undefined;
  const fromSources = /\.[cm]?ts$/.test(file);
  const bins = fromSources ? SOURCE_COMMANDS : ((readManifest(root)?.bin ?? {}) as Record<string, string>);
  // From the sources, Node needs the wrapper's own loader flags (--import tsx); the build needs none.
  const nodeArgs = fromSources ? process.execArgv : [];
  const commands: Record<string, string[]> = {};
  for (const [name, relative] of Object.entries(bins))
    commands[name] = [process.execPath, ...nodeArgs, join(root, relative)];
  return Object.keys(commands).length > 0 ? commands : undefined;
}

function packageRoot(from: string): string | undefined {
  for (let folder = from; ; folder = dirname(folder)) {
    if (readManifest(folder)?.name === PACKAGE_NAME) return folder;
    if (dirname(folder) === folder) return undefined;
  }
}

function readManifest(folder: string): { name?: string; bin?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as { name?: string; bin?: unknown };
  } catch {
    return undefined;
  }
}

function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
