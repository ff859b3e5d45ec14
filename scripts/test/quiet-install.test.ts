import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { type BuildOptions, build } from "esbuild";
import config, { LIBRARY_ENTRIES } from "../../tsup.config.ts";

const ROOT = new URL("../../", import.meta.url);

// What the project's own `npm ci` prints: no install script left unreviewed, no warning from the build
// (`prepare` runs tsup) that a CommonJS output cannot hold what the sources use.
describe("a quiet npm ci", () => {
  it("allowScripts says, for every package of the lock with an install script, whether it may run", () => {
    const manifest = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as {
      allowScripts?: Record<string, boolean>;
    };
    const lock = JSON.parse(readFileSync(new URL("package-lock.json", ROOT), "utf8")) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    assert.ok(withScripts.length > 0);
    const unreviewed = withScripts.filter((name) => typeof manifest.allowScripts?.[name] !== "boolean");
    assert.deepEqual(unreviewed, []);
  });

  it("the library's CommonJS build of the sources is made without a warning", async () => {
    const library = (Array.isArray(config) ? config : [config]).find(
      (entry) => typeof entry === "object" && entry.outDir === "dist/lib",
    );
    assert.ok(library && typeof library === "object");
    const options: BuildOptions = {
      entryPoints: [fileOf(LIBRARY_ENTRIES.conformance)],
      bundle: true,
      format: "cjs",
      platform: "node",
      target: "node20",
      write: false,
      logLevel: "silent",
      // As tsup leaves them: the package's dependencies are the installer's.
      packages: "external",
      external: [...((library.external as string[] | undefined) ?? [])],
      // tsup's shims: import.meta.url becomes the CommonJS file's own URL.
      ...(library.shims ? { define: { "import.meta.url": JSON.stringify("file:///dist/lib/x.cjs") } } : {}),
    };
    library.esbuildOptions?.(options, { format: "cjs" });
    const { warnings } = await build(options);
    assert.deepEqual(
      warnings.map((warning) => `${warning.location?.file}: ${warning.text}`),
      [],
    );
  });
});

function fileOf(path: string): string {
  return new URL(path, ROOT).pathname;
}
