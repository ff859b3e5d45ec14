import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The packed package.json leaves out `prepare`. It builds dist/ in a clone (`npm ci`) and for git
 * installs, where pacote runs it; a tarball already holds dist/, yet npm lists `prepare` among the
 * install scripts it warns about on every `npm i ./petstore-….tgz`. `prepack` strips it and `postpack`
 * puts the file back byte for byte; a pack that failed in between is undone by the next pack. With
 * `prepare` gone, `npm pack` packs the dist/ already built (`npm ci`, `npm run build`), and
 * `prepublishOnly` builds before a publish.
 */

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const MANIFEST = join(ROOT, "package.json");
const KEPT = join(ROOT, "node_modules/.cache/petstore-pack/package.json");

/** Written beside and renamed over, so a reader of package.json never sees half a file. */
function replaceManifest(text: string): void {
  const next = `${MANIFEST}.next`;
  writeFileSync(next, text);
  renameSync(next, MANIFEST);
}

export function stripForPacking(): void {
  restoreAfterPacking();
  const original = readFileSync(MANIFEST, "utf8");
  const manifest = JSON.parse(original) as { scripts?: Record<string, string> };
  if (manifest.scripts?.prepare === undefined) return;
  mkdirSync(dirname(KEPT), { recursive: true });
  writeFileSync(KEPT, original);
  delete manifest.scripts.prepare;
  replaceManifest(`${JSON.stringify(manifest, null, 2)}\n`);
}

export function restoreAfterPacking(): void {
  if (!existsSync(KEPT)) return;
  replaceManifest(readFileSync(KEPT, "utf8"));
  rmSync(KEPT);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const step = process.argv[2];
  if (step === "strip") {
    if (!existsSync(join(ROOT, "dist/mock/petstore-mock.cjs"))) {
      console.error("dist/ is not built: run `npm run build` before packing");
      process.exit(1);
    }
    stripForPacking();
  } else if (step === "restore") restoreAfterPacking();
  else {
    console.error("usage: tsx scripts/packed-manifest.ts strip|restore");
    process.exit(2);
  }
}
