import { API_CASES } from "./api-cases.ts";
import { CONTROL_CASES } from "./control-cases.ts";

/**
 * One table of behaviours that every transport runs whole: the core itself, the Node server over HTTP,
 * the Web-standard handler and Mock Service Worker. A rule cannot differ between them without a failure.
 */
export const SHARED_CASES = [...API_CASES, ...CONTROL_CASES];
