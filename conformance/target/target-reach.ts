import type { Contract } from "../../contract/contract.ts";
import type { ReaderLimits } from "../judging/list-judge.ts";
import type { SettingNames } from "../judging/setting-names.ts";
import type { TlsOptions } from "./http-client.ts";

/** How a run reaches a deployment and reads its answers: the same settings for the suite and explore. */
export interface TargetReach {
  /**
   * A session of the project's mock (`X-Mock-Session` on every request): each run on a new name starts
   * from fresh fixtures. Real deployments ignore the header.
   */
  session?: string;
  /** Headers for every request (a gateway's); their values are masked in reports unless named in showHeaders. */
  headers?: Readonly<Record<string, string>>;
  /** Names of `headers` that are not secret and may be shown. */
  showHeaders?: readonly string[];
  tls?: TlsOptions;
  /** A proxy URL, over the proxy environment variables. */
  proxy?: string;
  /** Where proxy variables are read from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** The longest one request may take, its answer's whole body included (default 120 s). */
  deadlineMs?: number;
  /** 429 answers are retried up to this many times (default 5)… */
  maxRetries?: number;
  /** …each after Retry-After, capped at this (default 30 s). */
  maxRetryWaitMs?: number;
  /** Bytes read of one body at most (default 2 GiB); a larger body fails its check, naming the limit. */
  maxBodyBytes?: number;
  /** Bounds of the judge's JSON reader (--max-depth, --max-string, --max-number); defaults when absent. */
  readerLimits?: ReaderLimits;
  contract?: Contract;
  /**
   * How messages name the settings (default: these options' names): a command gives its flags, so that
   * "baseUrl must be an absolute http(s) URL" reads "--base-url must be …" on its command line.
   */
  settingNames?: SettingNames;
}
