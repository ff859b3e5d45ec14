import { VERSION_PREFIX } from "../../contract/operations.ts";

/** Where the validating proxy listens unless told otherwise: next to the mock's 4010. */
export const DEFAULT_PROXY_PORT = 4020;

/** Where the proxy takes the API, whatever the upstream's own base path is: the interface version's. */
export const PROXY_BASE_PATH = VERSION_PREFIX;

/** How long a client may take to send a whole request, head and body, before the proxy cuts it. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
