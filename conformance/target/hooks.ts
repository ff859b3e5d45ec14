import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { nearestFlag } from "../../common/nearest-flag.ts";
import type { ConformanceHooks, ProvidedIds } from "./hook-types.ts";
import { hideSecrets } from "./secret-hider.ts";

export type { ConformanceHooks, HookContext, ProvidedIds } from "./hook-types.ts";

/** A hook could not be loaded or threw: an error of the run (exit 2) with the hook's message. */
export class HookError extends Error {
  override name = "HookError";
}

/** The name `--hooks` takes for the shipped hook, wherever the package is installed. */
export const MOCK_CONTROL_HOOKS = "mock-control";

/** `name`: how the caller names the hooks setting, for messages. */
export async function loadHooks(path: string, name = "hooks"): Promise<ConformanceHooks> {
  if (path === MOCK_CONTROL_HOOKS) return import("./mock-control-hooks.ts");
  const extension = /\.(m?js|ts|mts)$/.test(path);
  if (!extension && !/[\\/]/.test(path) && nearestFlag(path, [MOCK_CONTROL_HOOKS]) !== undefined)
    throw new HookError(`${name} ${path} names no hooks: did you mean ${MOCK_CONTROL_HOOKS}?`);
  if (!extension) throw new HookError(`${name} takes a .js, .mjs or .ts module (got ${path})`);
  // Said here, before Node's "Cannot find module" that names the file importing it, not the one given.
  if (!existsSync(path)) throw new HookError(`cannot load the hooks file ${path}: not found`);
  let module: ConformanceHooks;
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as ConformanceHooks;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_UNKNOWN_FILE_EXTENSION") {
      throw new HookError(
        `cannot load the hooks ${path}: Node runs a .ts module only with a TypeScript loader; ` +
          "run with NODE_OPTIONS=--import=tsx (npm i -D tsx), or write the hooks as .mjs",
      );
    }
    throw new HookError(`cannot load the hooks ${path}: ${(error as Error).message}`);
  }
  for (const name of ["beforeRun", "afterRun", "provision", "release"] as const) {
    if (module[name] !== undefined && typeof module[name] !== "function") {
      throw new HookError(`${path}: ${name} must be a function`);
    }
  }
  return module;
}

/**
 * Runs a hook; whatever it throws ends the run with its message, secrets hidden, or with what `diagnose`
 * makes of it (a target the hook could not reach, said as the run says it).
 */
export async function runHook<T>(
  name: string,
  call: () => T | Promise<T>,
  secrets: readonly string[],
  diagnose?: (error: unknown) => string | undefined,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const message = hideSecrets(diagnose?.(error) ?? (error as Error)?.message ?? String(error), secrets);
    throw new HookError(`the ${name} hook failed: ${message}`);
  }
}

/** One id the hook provided, checked to be a string of digits. */
export function hookId(provided: ProvidedIds | undefined, field: keyof ProvidedIds): string | undefined {
  const value: unknown = provided?.[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^-?\d+$/.test(value)) {
    throw new HookError(
      `the beforeRun hook's ${field} must be a string of digits (got ${JSON.stringify(String(value))})`,
    );
  }
  return value;
}
