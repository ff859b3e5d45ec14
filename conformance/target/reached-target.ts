import { SESSION_NAME } from "../../contract/session.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import { headerSecrets } from "./credentials.ts";
import type { ConformanceHooks, HookContext } from "./hook-types.ts";
import { loadHooks } from "./hooks.ts";
import { maskedHeaders } from "./masked-headers.ts";
import type { ProxyChoice } from "./proxy-env.ts";
import { ConformanceUsageError, routeTo } from "./target.ts";
import type { TargetReach } from "./target-reach.ts";

/** What a run needs of its caller before anything else: a key, and a session name the mock takes. */
export function checkCaller(options: { apiKey: string; session?: string }, names: SettingNames): void {
  if (!options.apiKey) throw new ConformanceUsageError(`an API key is required: ${names.apiKey}`);
  if (options.session !== undefined && !SESSION_NAME.test(options.session)) {
    throw new ConformanceUsageError(
      `${names.session} must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'`,
    );
  }
}

/** A deployment as the suite and explore reach it: the way there, the headers, the hooks, the secrets. */
export interface ReachedTarget {
  env: NodeJS.ProcessEnv;
  route: ProxyChoice;
  masked: ReturnType<typeof maskedHeaders>;
  hooks: ConformanceHooks;
  hookContext: HookContext;
  /** Every credential the run's outputs must hide: the key, the secret headers, the control token. */
  secrets: string[];
}

export async function reachTarget(
  baseUrl: URL,
  options: TargetReach & { apiKey: string; hooks?: string | ConformanceHooks },
  names: SettingNames,
): Promise<ReachedTarget> {
  const env = options.env ?? process.env;
  const route = routeTo(baseUrl, env, options.proxy, names);
  const masked = maskedHeaders(options.headers, options.showHeaders, names);
  const hooks =
    typeof options.hooks === "string" ? await loadHooks(options.hooks, names.hooks) : (options.hooks ?? {});
  const hookContext: HookContext = {
    baseUrl: baseUrl.href,
    apiKey: options.apiKey,
    ...(options.session !== undefined ? { session: options.session } : {}),
    fetch: globalThis.fetch,
  };
  const secrets = [
    options.apiKey,
    ...masked.entries.flatMap(([name, value]) => headerSecrets(name.toLowerCase(), value)),
    env.PETSTORE_CONTROL_TOKEN ?? "",
    process.env.PETSTORE_CONTROL_TOKEN ?? "",
  ].filter((secret) => secret !== "");
  return { env, route, masked, hooks, hookContext, secrets };
}
