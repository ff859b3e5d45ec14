// The mock's sessions as control.openapi.yaml describes them: read by the mock, and by the suite, which
// refuses a session name the mock would refuse before sending anything.

/** The header naming the session a request plays in (lower case, as Node and the core see headers). */
export const SESSION_HEADER = "x-mock-session";
export const SESSION_NAME = /^[A-Za-z0-9._-]{1,64}$/;
