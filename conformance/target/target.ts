import { VERSION_PREFIX } from "../../contract/operations.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import { credentialsInUrl, hideUrlCredentials } from "./credentials.ts";
import { type ProxyChoice, ProxyConfigError, proxyFor } from "./proxy-env.ts";
import { hideSecrets } from "./secret-hider.ts";

// The target as the suite and the proxy both reach it: its address checked, the way to it (straight or
// through a proxy), what a start warns of, and the two errors that stop a run or a proxy before anything is
// judged. Messages name each setting as the caller knows it (setting-names.ts).

/** Without a byte from the target, an exchange fails (the suite's and the proxy's default). */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** Options a run or a proxy cannot start with (exit code 2 on the command line). */
export class ConformanceUsageError extends Error {
  override name = "ConformanceUsageError";
}

/**
 * The target cannot be judged: no answer, an untrusted certificate, a redirect of the base address, a proxy
 * that refuses (exit code 2 on the command line). The message says how to fix it in one line; it may quote
 * what the target sent (a redirect's Location that echoes the key), so the run's secrets are hidden in it
 * before anything prints it.
 */
export class TargetUnreachableError extends Error {
  override name = "TargetUnreachableError";

  constructor(message: string, secrets: Iterable<string>) {
    super(hideSecrets(message, secrets));
  }
}

/**
 * A target's address as a run or a proxy is given it: an absolute http(s) URL without credentials, which
 * are never sent and so are refused; messages never print them.
 */
export function parseTargetUrl(text: string, names: SettingNames): URL {
  let url: URL;
  const shown = hideUrlCredentials(text);
  try {
    url = new URL(text);
  } catch {
    throw new ConformanceUsageError(`${names.target} must be an absolute http(s) URL (got "${shown}")`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConformanceUsageError(`${names.target} must be an http or https URL (got "${shown}")`);
  const credentials = credentialsInUrl(url, names, text);
  if (credentials) throw new ConformanceUsageError(credentials);
  return url;
}

/** The way to a target: direct, or through the proxy given or the environment names; a bad one is a usage error. */
export function routeTo(
  target: URL,
  env: NodeJS.ProcessEnv,
  proxy: string | undefined,
  names: SettingNames,
): ProxyChoice {
  try {
    return proxyFor(target, env, { url: proxy, name: names.proxy });
  } catch (error) {
    if (error instanceof ProxyConfigError) throw new ConformanceUsageError(error.message);
    throw error;
  }
}

/**
 * What a start warns of about its target: an address that does not end in the interface version's path
 * segment, and certificates left unchecked. `role` names the address (the base URL, the upstream), `who`
 * what trusted it (the run, the proxy).
 */
export function targetWarnings(
  target: URL,
  insecure: boolean | undefined,
  names: SettingNames,
  { role, who }: { role: string; who: string },
): string[] {
  const warnings: string[] = [];
  if (
    target.pathname.replace(/\/$/, "") !== VERSION_PREFIX &&
    !target.pathname.replace(/\/$/, "").endsWith(VERSION_PREFIX)
  )
    warnings.push(
      `${role} ${target.href} does not end with ${VERSION_PREFIX}, the path segment of the interface version (§9.1)`,
    );
  if (insecure)
    warnings.push(`certificates were not checked (${names.insecure}): ${who} trusted whoever answered`);
  return warnings;
}
