import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Files shipped beside the code (fixtures, the dashboard) are found from the package's root, which is the same
// whether this code runs from its sources in a checkout or bundled under dist/ in an installed package.
let root: string | undefined;

export function packageFile(relativePath: string): string {
  if (root === undefined) {
    let directory = dirname(fileURLToPath(import.meta.url));
    while (!existsSync(join(directory, "package.json")) && dirname(directory) !== directory) {
      directory = dirname(directory);
    }
    root = directory;
  }
  return join(root, relativePath);
}
