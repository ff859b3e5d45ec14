import { isLoopback } from "../common/allowed-hosts.ts";

/** Whether the control API is on, and the start-up line that says so. */
export interface ControlAccess {
  enabled: boolean;
  token?: string;
  /** Why it is off, for the start-up lines. */
  reason?: string;
}

/**
 * On by default on loopback, where only this machine can reach it. Bound beyond loopback, anyone who can
 * reach the mock could rearrange it, so it stays off unless a token guards it.
 */
export function controlAccess(host: string, control: boolean, token: string | undefined): ControlAccess {
  if (!control) return { enabled: false, reason: "off (--no-control)" };
  if (token !== undefined) return { enabled: true, token };
  if (isLoopback(host)) return { enabled: true };
  return { enabled: false, reason: `off: bound to ${host} without --control-token` };
}
