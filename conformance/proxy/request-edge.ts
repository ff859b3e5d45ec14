import type { IncomingMessage } from "node:http";
import type { AllowedHosts } from "../../common/allowed-hosts.ts";
import type { SettingNames } from "../judging/setting-names.ts";

/** A request's head once checked at the proxy's edge: every later part reads these, never the raw head. */
export interface CheckedRequest {
  method: string;
  /** The target in origin form (a path and query), whatever form the client sent. */
  target: string;
  /** The request's own address as the client named it (its Host and target), for the HAR. */
  url: URL;
}

export type EdgeVerdict =
  | { ok: true; request: CheckedRequest }
  | { ok: false; status: 400 | 403; code: string; message: string };

export interface EdgeSettings {
  hosts: AllowedHosts;
  upstream: URL;
  /**
   * Present when the proxy adds credentials of its own: the page origins that may use them. Requests of any
   * other site are refused, simple ones included, since their answers are not all a browser keeps from a page.
   */
  credentialOrigins?: ReadonlySet<string>;
  names: SettingNames;
}

// A Host header: a name or an IP literal, and an optional port of 1-65535.
const HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._~%!$&'()*+,;=-]+)(?::(\d{1,5}))?$/i;

/**
 * Checks a request's head once, before anything is spent on it or read from it: a Host the proxy answers
 * to and can parse, a target that names the upstream (origin form, or the absolute form of the upstream's
 * own URL or the proxy's), and, when the proxy lends credentials, a page of an origin allowed to use them.
 */
export function checkRequest(request: IncomingMessage, settings: EdgeSettings): EdgeVerdict {
  const host = request.headers.host;
  if (host === undefined || !validHost(host))
    return refuse(400, "bad_host", "the request's Host header is missing or not a host name and port");
  if (!settings.hosts.allows(host))
    return refuse(
      403,
      "foreign_host",
      `the proxy answers only requests addressed to it (Host: ${settings.hosts.described}); add a name with ${settings.names.allowedHosts}`,
    );
  const target = originForm(request.url ?? "", settings);
  if (target === undefined)
    return refuse(
      400,
      "bad_target",
      `the proxy forwards only paths, or http(s) URLs of its upstream ${settings.upstream.origin}`,
    );
  let url: URL;
  try {
    url = new URL(`http://${host}${target}`);
  } catch {
    return refuse(400, "bad_target", "the request's target is not a path a URL can hold");
  }
  const foreign = settings.credentialOrigins && foreignSite(request, host, settings.credentialOrigins);
  if (foreign)
    return refuse(
      403,
      "foreign_origin",
      `the proxy adds ${settings.names.headers} credentials and serves only pages of its own origin or of ${settings.names.corsOrigins}: ${foreign}`,
    );
  return { ok: true, request: { method: request.method ?? "GET", target, url } };
}

function validHost(host: string): boolean {
  const match = HOST.exec(host);
  if (!match) return false;
  const port = match[1];
  return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
}

/**
 * A target as a path: kept when it is one, the path and query of an absolute-form target ("http://host/x",
 * which clients send to a forward proxy) when that names the upstream or the proxy itself, and nothing for
 * any other form ("*", another scheme, another host).
 */
function originForm(target: string, settings: EdgeSettings): string | undefined {
  if (target.startsWith("/")) return target;
  if (!/^https?:\/\//i.test(target)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(target);
  } catch {
    return undefined;
  }
  const ours = parsed.host === settings.upstream.host || settings.hosts.allows(parsed.host);
  return ours ? `${parsed.pathname}${parsed.search}` : undefined;
}

/** Why a request comes from a site that may not use the proxy's credentials, if it does. */
function foreignSite(
  request: IncomingMessage,
  host: string,
  allowed: ReadonlySet<string>,
): string | undefined {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    if (allowed.has(origin) || origin.toLowerCase() === `http://${host.toLowerCase()}`) return undefined;
    return `a request of a page of ${origin}`;
  }
  const site = request.headers["sec-fetch-site"];
  if (site === "cross-site" || site === "same-site") return `a ${site} request with no Origin`;
  return undefined;
}

function refuse(status: 400 | 403, code: string, message: string): EdgeVerdict {
  return { ok: false, status, code, message };
}
