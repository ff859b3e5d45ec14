import { defineConfig } from "tsup";

// Three outputs from the same sources:
// - the library entry points, as ES modules and CommonJS (Jest's default), each with its declarations
//   (.d.ts and .d.cts), dependencies left to the installer;
// - the mock's command as one CommonJS file, and the suite's as ES modules with their dependencies bundled
//   in and each feature in a chunk of its own, because a command started in every CI job should load as
//   little as it can;
// - the browser build of the in-process mock, one ES module (msw left to the app).
export const LIBRARY_ENTRIES = {
  "in-process": "server/in-process.ts",
  msw: "server/adapters/msw.ts",
  playwright: "server/adapters/playwright.ts",
  browser: "server/browser.ts",
  "control-client": "contract/control-client.ts",
  conformance: "conformance/index.ts",
};

// The proxy's list judges run on a worker thread started from this file, beside the chunk that starts it.
const JUDGE_WORKER = { "judge-worker": "conformance/judging/judge-worker.ts" };

export default defineConfig([
  {
    entry: { ...LIBRARY_ENTRIES, ...JUDGE_WORKER },
    outDir: "dist/lib",
    format: ["esm", "cjs"],
    platform: "node",
    target: "node20",
    dts: { entry: LIBRARY_ENTRIES },
    shims: true,
    clean: true,
    sourcemap: false,
    // CommonJS has no import.meta.resolve (tsup shims only import.meta.url): the one use, which starts the
    // judges' thread from the TypeScript sources, is never reached in a build, and require.resolve (of tsx,
    // a development tool left outside) stands in.
    external: ["tsx"],
    esbuildOptions(options, { format }) {
      if (format === "cjs") options.define = { ...options.define, "import.meta.resolve": "require.resolve" };
    },
  },
  {
    // The mock as one CommonJS file: Node 20 loads it in about two thirds of the time its ES-module chunks
    // take (no module graph to resolve and link), and its start-up is what every CI job waits for. pino is in
    // it, evaluated only with the JSON log; ioredis stays outside, required only with --store. The command
    // itself is a small first file that runs it through V8's code cache (server/compile-cached.ts).
    entry: { "petstore-mock": "server/compile-cached.ts", "mock-main": "server/main.ts" },
    // Pure ASCII (other characters escaped), so that Node reads the file into a one-byte string.
    esbuildOptions(options) {
      options.charset = "ascii";
    },
    outDir: "dist/mock",
    format: ["cjs"],
    outExtension: () => ({ js: ".cjs" }),
    platform: "node",
    target: "node20",
    noExternal: [/^(?!ioredis$)/],
    external: ["ioredis"],
    shims: true,
    clean: true,
  },
  {
    entry: { "petstore-conformance": "conformance/bin.ts", ...JUDGE_WORKER },
    outDir: "dist/bin",
    format: ["esm"],
    platform: "node",
    target: "node20",
    splitting: true,
    // undici stays a package of its own: explore alone loads it, and bundled its CommonJS exports reach an
    // ES module's dynamic import only as a default.
    noExternal: [/^(?!undici$)/],
    external: ["undici"],
    // Bundled CommonJS dependencies (pino) call require for Node's own modules.
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module";const require = __createRequire(import.meta.url);',
    },
    clean: true,
  },
  {
    entry: { "petstore-mock.browser": "server/browser.ts" },
    outDir: "dist",
    format: ["esm"],
    platform: "browser",
    target: "es2022",
    noExternal: [/^(?!msw)/],
    external: ["msw"],
    outExtension: () => ({ js: ".js" }),
  },
]);
