import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// The peers and benchmark tools live in tools/, a package of their own, so that the project's npm ci does
// not install them: `npm test` and `npm run bench` install them here first, and only when tools/'s lock has
// changed since the last install (npm ci would reinstall them every time).

const TOOLS = fileURLToPath(new URL("../tools/", import.meta.url));
const LOCK = join(TOOLS, "package-lock.json");
const STAMP = join(TOOLS, "node_modules", ".installed-from-lock");

const wanted = createHash("sha256").update(readFileSync(LOCK)).digest("hex");
if (!existsSync(STAMP) || readFileSync(STAMP, "utf8") !== wanted) {
  execFileSync("npm", ["ci", "--prefix", TOOLS, "--no-audit", "--no-fund"], { stdio: "inherit" });
  writeFileSync(STAMP, wanted);
}
