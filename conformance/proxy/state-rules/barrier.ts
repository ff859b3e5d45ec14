import type { Routed } from "../../../contract/operations.ts";

/**
 * Writes the contract has no operation for (a control API, another API behind the same proxy): the proxy
 * cannot know which orders such a write changed, so one that may have taken effect is a barrier, at which
 * the state rules forget what they knew of every order and start again.
 */

/** Methods that change nothing (RFC 9110 §9.2.1): never a barrier. */
const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

/** Whether a request is a write no operation of the contract has, in any path, under /v1 or outside it. */
export function isWriteOutsideContract(method: string, routed: Routed | undefined): boolean {
  return routed === undefined && !SAFE_METHODS.has(method.toUpperCase());
}

/**
 * Whether such a write, answered `status` (undefined: no answer, or none that came whole), may have taken
 * effect. A 4xx says the request was refused as it came; a 5xx, a 3xx (a 303 follows a write carried out)
 * or no answer says nothing of it, so they are barriers too.
 */
export function mayHaveTakenEffect(status: number | undefined): boolean {
  return status === undefined || status < 400 || status >= 500;
}

/**
 * The key under which writes outside the contract are counted among the cancels in flight: no order id
 * (those are int64 digits), so that the judging can ask whether one is on its way as it asks of a cancel.
 */
export const WRITE_OUTSIDE_CONTRACT_IN_FLIGHT = "a write outside the contract";
