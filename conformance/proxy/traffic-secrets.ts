import { randomUUID } from "node:crypto";
import { PROXY_OPTION_NAMES, type SettingNames } from "../judging/setting-names.ts";
import type { RecordedRequest, RecordedResponse } from "../reports/report.ts";
import { headerSecrets } from "../target/credentials.ts";
import { maskedHeaders } from "../target/masked-headers.ts";
import type { ProxyChoice } from "../target/proxy-env.ts";
import { distinctName, type SecretHider, secretHider } from "../target/secret-hider.ts";
import type { JudgedExchange } from "./judged-exchange.ts";

/** Hiders kept for the credentials of recent exchanges: a client sends the same ones again and again. */
const HIDERS_KEPT = 64;
/**
 * An exchange's own credential parts hidden one by one at most: a hider costs about its number of forms to
 * make, and a client sending a new Cookie of a thousand values with every request would hold the proxy's
 * thread for each. Past it, the exchange's texts are hidden whole.
 */
export const OWN_SECRETS_HIDDEN = 128;

/**
 * Begins a stand-in among an exchange's own secrets that says its texts are hidden whole, and why (a
 * credential the proxy could not read all of): a NUL and a number drawn at start, which no value of the
 * traffic can spell.
 */
const HIDDEN_WHOLE = `\u0000hidden whole ${randomUUID()}\u0000`;

/** A stand-in for an exchange's own secrets: its texts are hidden whole, for this reason. */
export function hiddenWhole(reason: string): string {
  return HIDDEN_WHOLE + reason;
}

export interface SecretSettings {
  headers?: Readonly<Record<string, string>>;
  showHeaders?: readonly string[];
  secretNames?: readonly string[];
  /** How messages name the settings (for a header refused at start). */
  settingNames?: SettingNames;
}

/**
 * The secrets hidden wherever the proxy writes, from a bounded set: the configured ones (the masked
 * --header values, the forward proxy's credentials) in every text, and in each exchange's texts (its lines,
 * its evidence in the reports, its HAR entry) that exchange's own credentials, every one it carried. No
 * list is learned from the traffic: what one client sends is hidden where its own exchanges are written.
 */
export class TrafficSecrets {
  /** Names whose values are credentials: the masked --header names and the --secret names. */
  readonly names: Set<string>;
  /** The configured secrets, for the report as a whole. */
  readonly configured: readonly string[];
  /** Hides the configured secrets. */
  readonly hide: SecretHider;
  readonly #configured: ReadonlySet<string>;
  readonly #hiders = new Map<string, SecretHider>();

  constructor(options: SecretSettings, route: ProxyChoice) {
    const masked = maskedHeaders(
      options.headers,
      options.showHeaders,
      options.settingNames ?? PROXY_OPTION_NAMES,
    );
    this.names = new Set([...masked.names, ...(options.secretNames ?? []).map((name) => name.toLowerCase())]);
    this.configured = [
      ...masked.entries.flatMap(([name, value]) => headerSecrets(name.toLowerCase(), value)),
      ...(route.proxy ? proxyCredentials(route.proxy) : []),
    ].filter((secret) => secret !== "");
    this.#configured = new Set(this.configured);
    this.hide = secretHider(this.configured);
  }

  /** Hides in one exchange's texts the configured secrets and `own`, the credentials it carried. */
  forExchange(own: readonly string[]): SecretHider {
    const added = own.filter((secret) => !this.#configured.has(secret));
    if (added.length === 0) return this.hide;
    const whole = added.find((secret) => secret.startsWith(HIDDEN_WHOLE));
    if (whole !== undefined) return hiddenWholeFor(whole.slice(HIDDEN_WHOLE.length));
    if (added.length > OWN_SECRETS_HIDDEN)
      return hiddenWholeFor(
        `the request carried ${added.length} credential parts, more than the ${OWN_SECRETS_HIDDEN} the proxy hides one by one`,
      );
    const key = JSON.stringify(added);
    let hider = this.#hiders.get(key);
    if (hider) this.#hiders.delete(key);
    else hider = secretHider([...this.configured, ...added]);
    // Kept as the most recent; past the bound, the least recently used goes.
    this.#hiders.set(key, hider);
    if (this.#hiders.size > HIDERS_KEPT) this.#hiders.delete(this.#hiders.keys().next().value ?? "");
    return hider;
  }
}

/** Hides every text whole, saying why. */
function hiddenWholeFor(reason: string): SecretHider {
  const notice = `*** (hidden whole: ${reason})`;
  // Nothing of a text is shown: no part of a secret either.
  return Object.assign(() => notice, { reach: 0 });
}

/** A forward proxy's user and password, as the URL spells them and decoded (as they are sent). */
function proxyCredentials(proxy: URL): string[] {
  const decoded = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  return [proxy.password, proxy.username].flatMap((part) => [part, decoded(part)]);
}

type Hide = (text: string) => string;

/**
 * An exchange's texts with its secrets hidden, before a line, a report or a verdict shows them: its label
 * and path, why it was not judged, the upstream's error, and each check and finding that did not pass, with
 * its evidence. Passed checks hold nothing of the exchange (and may be shared with an identical answer).
 */
export function hideInJudged(judged: JudgedExchange, hide: Hide): void {
  judged.ref.label = hide(judged.ref.label);
  judged.pathname = hide(judged.pathname);
  if (judged.notJudged !== undefined) judged.notJudged = hide(judged.notJudged);
  if (judged.upstreamError !== undefined) judged.upstreamError = hide(judged.upstreamError);
  for (const check of judged.checks) {
    if (check.status === "passed") continue;
    check.message = hide(check.message);
    if (check.request) check.request = hiddenRequest(check.request, hide);
    if (check.response) check.response = hiddenResponse(check.response, hide);
  }
  for (const finding of judged.findings) finding.message = hide(finding.message);
}

/** A copy of a recorded request with its secrets hidden (its headers are shared with the exchange). */
export function hiddenRequest(request: RecordedRequest, hide: Hide): RecordedRequest {
  return { ...request, path: hide(request.path), headers: hiddenHeaders(request.headers, hide) };
}

/** A copy of a recorded response with its secrets hidden (its headers are shared with the exchange). */
export function hiddenResponse(response: RecordedResponse, hide: Hide): RecordedResponse {
  return { ...response, headers: hiddenHeaders(response.headers, hide), body: hide(response.body) };
}

/** Names hidden as well as values: a server may echo a secret as a header's name. */
function hiddenHeaders(headers: Readonly<Record<string, string>>, hide: Hide): Record<string, string> {
  const hidden: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) hidden[distinctName(hidden, hide(name))] = hide(value);
  return hidden;
}
