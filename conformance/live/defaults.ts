/** Where the validating proxy listens unless told otherwise: next to the mock's 4010. */
export const DEFAULT_PROXY_PORT = 4020;
