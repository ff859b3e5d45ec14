// How the built command's first file (compile-cached.ts) and the mock it runs talk about the compile cache:
// the mock says when it serves (a cache is written only from then on) and --warm-cache writes it on demand.
// A global, since the two are separate files and the first one runs the other.

const HOOK = Symbol.for("petstore-mock.compile-cache");

export interface CompileCacheHook {
  /** Where the cache goes. */
  file: string;
  /** Writes what V8 has compiled so far; false when it could not be written. */
  write: () => boolean;
  /** The mock serves: a missing or refused cache is written from what it compiles from now on. */
  serving: () => void;
}

export function offerCompileCache(hook: CompileCacheHook): void {
  (globalThis as Record<symbol, unknown>)[HOOK] = hook;
}

/** The cache of the command this process runs as; undefined when not the built command, or caching is off. */
export function compileCache(): CompileCacheHook | undefined {
  return (globalThis as Record<symbol, unknown>)[HOOK] as CompileCacheHook | undefined;
}
