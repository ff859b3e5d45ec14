import { SESSION_NAME } from "../../contract/session.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import { HookError } from "./hooks.ts";

/** The session a run is sent in: the one given, else the one the beforeRun hook made its orders in. */
export function sessionOfRun(
  given: string | undefined,
  provided: { session?: unknown } | null | undefined,
  names: SettingNames,
): string | undefined {
  if (given !== undefined) return given;
  const session: unknown = provided?.session;
  if (session === undefined) return undefined;
  if (typeof session !== "string" || !SESSION_NAME.test(session)) {
    throw new HookError(
      `the beforeRun hook's session must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-' (${names.session} is the same)`,
    );
  }
  return session;
}

/** What a run says when it is sent in the session its beforeRun hook made. */
export function hookSessionWarning(session: string | undefined, names: SettingNames): string {
  return `the beforeRun hook made its orders in a session of the mock's own, ${session}, so the run was sent in it (X-Mock-Session) and the default world is left as it was; ${names.session} names one`;
}
