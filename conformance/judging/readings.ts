/**
 * What a request is expected to get and why, where the suite's scenarios and the proxy's live judging read
 * the same requests: one wording of each reading of the spec, whoever judges it.
 */

export const UNAUTHORIZED = "§5.4, §7: a missing or invalid API key gets 401 with an Error record";
/** Why a cancel without a valid key is 401 whatever order it names. */
export const UNAUTHORIZED_CANCEL = `${UNAUTHORIZED}; authentication applies to every operation, so an unknown order with a bad key is 401, not 404`;

/** How list parameters the spec does not define are judged, strictly and by default. */
export const LIST_PARAMETERS = {
  expect: [200],
  because: "§4.1, §8, §9.2: no parameters; the call returns every order placed in the store",
  lenient: {
    expect: [200, 400],
    because:
      "§4.1, §8, §9.2: no parameters; the call returns every order placed in the store. The spec documents no answer to parameters it does not define, so 400 with an Error record is accepted too (read strictly: 200 only)",
  },
} as const;

/** How an orderId that is not an int64 is judged, strictly and by default. */
export const MALFORMED_ORDER_ID = {
  expect: [404, 409],
  because:
    "§4.2: orderId is an int64, so no order has this id; cancelOrder documents 204, 401, 404 and 409 only",
  lenient: {
    expect: [400, 404, 422],
    because:
      "§4.2: orderId is an int64; an id that is not one matches no documented case, and valid backends refuse such input with 400, 404 or 422 and an Error record, never 2xx or 5xx (read strictly: 404 or 409 only)",
  },
} as const;
