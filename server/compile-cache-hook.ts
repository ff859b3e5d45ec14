// How the built command's first file (compile-cached.ts) lets the mock it runs write the compile cache on
// demand (--warm-cache): a global, since the two are separate files and the first one runs the other.

const HOOK = Symbol.for("petstore-mock.compile-cache");

export interface CompileCacheHook {
  /** Where the cache goes. */
  file: string;
  /** Writes what V8 has compiled so far; false when it could not be written. */
  write: () => boolean;
}

export function offerCompileCache(hook: CompileCacheHook): void {
  (globalThis as Record<symbol, unknown>)[HOOK] = hook;
}

/** The cache of the command this process runs as; undefined when not the built command, or caching is off. */
export function compileCache(): CompileCacheHook | undefined {
  return (globalThis as Record<symbol, unknown>)[HOOK] as CompileCacheHook | undefined;
}
