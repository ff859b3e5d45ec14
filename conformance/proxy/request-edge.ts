import type { IncomingMessage } from "node:http";
import type { AllowedHosts } from "../../common/allowed-hosts.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import { methodOverrides } from "./method-override.ts";

/** A request's head once checked at the proxy's edge: every later part reads these, never the raw head. */
export interface CheckedRequest {
  readonly method: string;
  /** The target in origin form (a path and query), whatever form the client sent. */
  readonly target: string;
  /** The request's own address as the client named it (its Host and target), for the HAR. */
  readonly url: URL;
  /** Other methods its method overrides name (method-override.ts), which the upstream may have followed. */
  readonly overrides?: readonly string[];
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
 * The last Host each edge accepted. A client sends the same Host on every request, and whether one is
 * accepted depends on the text alone, so the same text is not checked again.
 */
const acceptedHost = new WeakMap<EdgeSettings, string>();

/**
 * A request that passed the edge. Its URL serves the HAR alone, so it is made when first read: from a Host
 * the URL parser accepted at the edge and a path, which together always make one.
 */
class EdgeRequest implements CheckedRequest {
  #url: URL | undefined;

  constructor(
    readonly method: string,
    readonly target: string,
    private readonly host: string,
    readonly overrides: readonly string[],
  ) {}

  get url(): URL {
    this.#url ??= new URL(`http://${this.host}${this.target}`);
    return this.#url;
  }
}

/**
 * Checks a request's head once, before anything is spent on it or read from it: a Host the proxy answers
 * to and can parse, a target that names the upstream (origin form, or the absolute form of the upstream's
 * own URL or the proxy's), and, when the proxy lends credentials, a page of an origin allowed to use them.
 */
export function checkRequest(request: IncomingMessage, settings: EdgeSettings): EdgeVerdict {
  const host = request.headers.host;
  if (host === undefined) return refuse(400, "bad_host", BAD_HOST);
  if (acceptedHost.get(settings) !== host) {
    const refused = refusedHost(host, settings);
    if (refused) return refused;
    acceptedHost.set(settings, host);
  }
  const target = request.url ?? "";
  const path = target.startsWith("/") ? target : absoluteTarget(target, settings);
  if (path === undefined)
    return refuse(
      400,
      "bad_target",
      `the proxy forwards only paths, or http(s) URLs of its upstream ${settings.upstream.origin}`,
    );
  const foreign = settings.credentialOrigins && foreignSite(request, host, settings.credentialOrigins);
  if (foreign)
    return refuse(
      403,
      "foreign_origin",
      `the proxy adds ${settings.names.headers} credentials and serves only pages of its own origin or of ${settings.names.corsOrigins}: ${foreign}`,
    );
  const method = request.method ?? "GET";
  const overrides = methodOverrides(request.headers, method, path);
  return { ok: true, request: new EdgeRequest(method, path, host, overrides) };
}

const BAD_HOST = "the request's Host header is missing or not a host name and port";

/** Why the proxy does not take a request with this Host, if it does not. */
function refusedHost(host: string, settings: EdgeSettings): EdgeVerdict | undefined {
  if (!validHost(host)) return refuse(400, "bad_host", BAD_HOST);
  if (!settings.hosts.allows(host))
    return refuse(
      403,
      "foreign_host",
      `the proxy answers only requests addressed to it (Host: ${settings.hosts.described}); add a name with ${settings.names.allowedHosts}`,
    );
  return undefined;
}

/** A Host of a name and a port of 1-65535 that the URL parser takes, so that any path makes a URL with it. */
function validHost(host: string): boolean {
  const match = HOST.exec(host);
  if (!match) return false;
  const port = match[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return false;
  return URL.canParse(`http://${host}/`);
}

/**
 * The path and query of an absolute-form target ("http://host/x", which clients send to a forward proxy)
 * when it names the upstream or the proxy itself, and nothing for any other form ("*", another scheme,
 * another host).
 */
function absoluteTarget(target: string, settings: EdgeSettings): string | undefined {
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
